/**
 * Redis frozen (SIGSTOP) for longer than the lease, under nodes that run
 * jobs. Leases run on Redis's clock, which goes on while the server is
 * stopped: on resuming, every lease has run out at once. No node took
 * another's jobs meanwhile (nothing ran), so none is fenced: each one's next
 * heartbeat renews its lease, says the lease had run out, and every job runs
 * once.
 */
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'prefork';
import { describe, expect, it } from 'vitest';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { waitUntil } from '../helpers/wait.js';
import { captureLog, countsOf, makeClient, makeWorker, newLedger, readLedger, uniqueName } from '../helpers/worker.js';

const own = ownRedisPerTest();
const LEASE_MS = 1_000;

describe('Redis frozen past the lease', () => {
  it('no node is fenced: each renews its lapsed lease, says so, and every job runs once', async () => {
    const url = own.server.url;
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const nodes: { worker: Worker; lines: Record<string, unknown>[] }[] = [];
    for (const name of ['node-a', 'node-b']) {
      const { log, lines } = captureLog();
      const worker = makeWorker({
        broker: url,
        namespace,
        ledger,
        concurrency: 1,
        prefetchMultiplier: 2,
        leaseMs: LEASE_MS,
        name,
        logger: log,
      });
      await worker.start();
      nodes.push({ worker, lines });
    }
    const ids = nodes.map((n) => n.worker.nodeId);
    const client = makeClient(url, namespace);
    // Two run (one per node) until the test lets them end; two wait in the nodes' buffers.
    const jobs = await client.enqueueMany(
      Array.from({ length: 4 }, () => ({ name: 'recordUntilFile' as const, args: ['go'] })),
    );
    await waitUntil(
      () => readLedger(ledger).length === 2 && nodes.every((n) => n.worker.stats().consumer.fetched === 2),
      'each node runs one job and holds another',
    );

    own.server.pause();
    // Frozen for two leases and a half: by Redis's clock every lease has run out when it resumes.
    await sleep(2.5 * LEASE_MS);
    own.server.resume();

    const said = (n: (typeof nodes)[number], what: RegExp) => n.lines.some((l) => what.test(String(l.msg)));
    await waitUntil(
      () => nodes.every((n) => said(n, /lost its lease \(fenced\)/) || said(n, /lease had run out/)),
      'each node heard from Redis about its lease',
    );
    for (const n of nodes) expect(said(n, /lost its lease \(fenced\)/)).toBe(false);
    expect(nodes.map((n) => n.worker.nodeId)).toEqual(ids);

    writeFileSync(`${ledger}.go`, '');
    expect(await Promise.all(jobs.map((j) => j.result({ timeout: 60_000 })))).toEqual(jobs.map((j) => j.id));
    await waitUntil(async () => {
      const [counts] = await countsOf(client, ['default']);
      return counts?.waiting === 0 && counts.reserved === 0;
    }, 'nothing waits or is reserved');
    const runs = readLedger(ledger).map((l) => l.id);
    expect(runs.sort()).toEqual(jobs.map((j) => j.id).sort());
    for (const n of nodes) expect(said(n, /recovered the jobs of node/)).toBe(false);
  });
});
