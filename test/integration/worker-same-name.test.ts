/**
 * Two nodes started with the same name (`-n`). Each has its own id and
 * lease, so neither takes the other's jobs; but a name addresses both
 * (`--node NAME`, per-node pauses, results), so the second one says so at
 * start, naming the first.
 */
import { hostname } from 'node:os';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { captureLog, cleanup, makeClient, makeWorker, newLedger, readLedger, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

describe('Two nodes of the same name', () => {
  it('the second says another live node has its name, naming it; both run jobs, each once', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const first = captureLog();
    const second = captureLog();
    const a = makeWorker({ broker: url, namespace, ledger, concurrency: 1, name: 'twin', logger: first.log });
    await a.start();
    const b = makeWorker({ broker: url, namespace, ledger, concurrency: 1, name: 'twin', logger: second.log });
    await b.start();
    expect(a.nodeId).not.toBe(b.nodeId);

    const warned = (lines: Record<string, unknown>[]) =>
      lines.filter((l) => l.level === 40 && /another live node is named 'twin'/.test(String(l.msg)));
    expect(warned(first.lines)).toEqual([]);
    const [line] = warned(second.lines);
    expect(String(line?.msg)).toContain(a.nodeId);
    expect(line?.others).toEqual([{ nodeId: a.nodeId, host: hostname(), pid: process.pid }]);

    const client = makeClient(url, namespace);
    const jobs = await client.enqueueMany(Array.from({ length: 6 }, () => ({ name: 'record' as const, args: [50] })));
    expect(await Promise.all(jobs.map((j) => j.result({ timeout: 30_000 })))).toEqual(jobs.map((j) => j.id));
    expect(
      readLedger(ledger)
        .map((l) => l.id)
        .sort(),
    ).toEqual(jobs.map((j) => j.id).sort());
  });
});
