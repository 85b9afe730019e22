/**
 * Revoke on real worker nodes over Redis: a job revoked before it starts
 * never runs, a revoke with terminate stops a running job (its child is
 * killed and replaced, the job queued behind it runs elsewhere without
 * spending a retry), and a node that starts after the revoke honours it.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { RevokedError } from 'prefork';
import { createBroker } from '../../dist/broker/index.js';
import {
  captureLog,
  cleanup,
  fixture,
  makeClient,
  makeWorker,
  newLedger,
  silent,
  startNode,
  uniqueName,
} from '../helpers/worker.js';

afterEach(cleanup);

const app = fixture('tasks-revoke.mjs');

/** The ledger of tasks-revoke.mjs: one line per event, "<jobId> <pid> <retries> <what>". */
function runs(ledger: string): { id: string; pid: number; retries: number; what: string }[] {
  let text: string;
  try {
    text = readFileSync(ledger, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id = '', pid = '0', retries = '0', what = ''] = line.split(' ');
      return { id, pid: Number(pid), retries: Number(retries), what };
    });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('revoke on worker nodes', () => {
  it('a job revoked before it starts never runs: its state is REVOKED and result() rejects with RevokedError', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const client = makeClient(url, namespace);
    const revoked = await client.enqueue('record', []);
    const kept = await client.enqueue('record', []);
    expect(await revoked.revoke()).toEqual({ id: revoked.id, outcome: 'revoked', removed: true });
    expect(await revoked.state()).toMatchObject({ state: 'REVOKED' });
    await expect(revoked.result({ timeout: 10_000 })).rejects.toBeInstanceOf(RevokedError);

    await makeWorker({ broker: url, namespace, ledger, app, concurrency: 1 }).start();
    expect(await kept.result({ timeout: 30_000 })).toEqual(expect.any(Number));
    expect(runs(ledger).map((r) => r.id)).toEqual([kept.id]);
    expect(await revoked.state()).toMatchObject({ state: 'REVOKED' });
  });

  it('a job a node holds but has not started is skipped there: it never runs, and its waiter hears REVOKED', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    await makeWorker({
      broker: url,
      namespace,
      ledger,
      app,
      concurrency: 1,
      strategy: 'fcfs',
      prefetchMultiplier: 4,
    }).start();
    const client = makeClient(url, namespace);
    const [first, second] = await client.enqueueMany([
      { name: 'record', args: [1_500] },
      { name: 'record', args: [] },
    ]);
    await expect.poll(() => runs(ledger).map((r) => r.id)).toEqual([first?.id]);
    // Fetched with the first one, so in the node's hands: not taken out of the queue.
    expect(await second?.revoke()).toEqual({ id: second?.id, outcome: 'revoked' });
    await expect(second?.result({ timeout: 30_000 })).rejects.toBeInstanceOf(RevokedError);
    expect(await first?.result({ timeout: 30_000 })).toEqual(expect.any(Number));
    expect(runs(ledger).map((r) => r.id)).toEqual([first?.id]);
  });

  it('revoke with terminate: the signal aborts first; a job that stops then ends its child cleanly, and the pool stays full', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const worker = makeWorker({ broker: url, namespace, ledger, app, concurrency: 1 });
    await worker.start();
    const client = makeClient(url, namespace);
    const job = await client.enqueue('polite', []);
    await expect.poll(() => runs(ledger).length).toBe(1);
    const pid = runs(ledger)[0]?.pid as number;
    expect(await job.revoke({ terminate: true, grace: 60_000 })).toMatchObject({ outcome: 'revoked' });
    await expect(job.result({ timeout: 30_000 })).rejects.toBeInstanceOf(RevokedError);
    await expect.poll(() => runs(ledger).map((r) => r.what)).toEqual(['started', 'aborted:RevokedError']);
    // Told to exit after its job, well before the grace period ran out: a new child took its place.
    await expect.poll(() => isAlive(pid), { timeout: 20_000 }).toBe(false);
    await expect
      .poll(() => worker.pool.stats().processes.filter((p) => p.state !== 'exited' && p.pid !== pid).length)
      .toBe(1);
    expect(await (await client.enqueue('record', [])).result({ timeout: 30_000 })).not.toBe(pid);
  });

  it('revoke with terminate kills a job that ignores its signal after the grace period; the job queued in its pipe runs elsewhere without spending a retry', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const { log, lines } = captureLog();
    const worker = makeWorker({
      broker: url,
      namespace,
      ledger,
      app,
      concurrency: 1,
      strategy: 'fcfs',
      prefetchMultiplier: 8,
      logger: log,
    });
    await worker.start();
    const client = makeClient(url, namespace);
    const [stuck, queued] = await client.enqueueMany([
      { name: 'stubborn', args: [600_000], options: { retries: 3 } },
      { name: 'record', args: [], options: { retries: 3 } },
    ]);
    await expect.poll(() => runs(ledger).filter((r) => r.id === stuck?.id).length).toBe(1);
    const victim = runs(ledger)[0]?.pid as number;
    // fcfs with one child: the second job waits in that child's pipe (held, not in the pool's buffer).
    await expect.poll(() => [worker.pool.stats().reserved, worker.pool.stats().outbound]).toEqual([2, 0]);
    expect(await stuck?.revoke({ terminate: true, grace: 500 })).toMatchObject({ outcome: 'revoked' });
    await expect(stuck?.result({ timeout: 30_000 })).rejects.toBeInstanceOf(RevokedError);
    const ranOn = await queued?.result({ timeout: 30_000 });
    expect(ranOn).not.toBe(victim);
    // No retry spent on it, and it ran once; the stubborn job never ran again.
    const queuedRuns = runs(ledger).filter((r) => r.id === queued?.id);
    expect(queuedRuns.map((r) => r.retries)).toEqual([0]);
    expect(runs(ledger).filter((r) => r.id === stuck?.id)).toHaveLength(1);
    await expect.poll(() => isAlive(victim), { timeout: 20_000 }).toBe(false);
    // The pool stays full: one live child, the victim's replacement; nothing counted as lost.
    await expect
      .poll(() => worker.pool.stats().processes.filter((p) => p.state === 'idle' || p.state === 'busy').length)
      .toBe(1);
    expect(worker.pool.stats().totals.lost).toBe(0);
    expect(lines.some((l) => l.msg === 'revoked job is running: stopping it' && l.jobId === stuck?.id)).toBe(true);
  });

  it('a revoke sent before a node starts is honoured by it: the job it recovers from a dead node is skipped', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const leaseMs = 1_500;
    const a = await startNode(
      { app, broker: url, namespace, concurrency: 1, strategy: 'fcfs', prefetchMultiplier: 4, leaseMs, name: 'node-a' },
      ledger,
    );
    const client = makeClient(url, namespace);
    const [first, second] = await client.enqueueMany([
      { name: 'stubborn', args: [600_000] },
      { name: 'record', args: [] },
    ]);
    await expect.poll(() => runs(ledger).map((r) => r.id)).toEqual([first?.id]);
    a.proc.kill('SIGKILL');
    await a.exited;
    // Node A held it (fetched, not started): it stays in the queue's pending list, under A.
    expect(await second?.revoke()).toEqual({ id: second?.id, outcome: 'revoked' });
    const { log, lines } = captureLog();
    const b = makeWorker({
      broker: url,
      namespace,
      ledger,
      app,
      concurrency: 1,
      leaseMs,
      name: 'node-b',
      logger: log,
    });
    await b.start();
    // It loaded the id when it registered.
    expect(b.stats().revoked).toBe(1);
    // Node B recovers both once A's lease is out, runs the first again, skips the second.
    await expect
      .poll(() => lines.some((l) => l.msg === 'job revoked; skipped' && l.jobId === second?.id), { timeout: 30_000 })
      .toBe(true);
    await expect.poll(() => runs(ledger).filter((r) => r.id === first?.id).length, { timeout: 30_000 }).toBe(2);
    expect(runs(ledger).some((r) => r.id === second?.id)).toBe(false);
    await expect(second?.result({ timeout: 10_000 })).rejects.toBeInstanceOf(RevokedError);
  });

  it("a node remembers no more revoked ids than its broker's revokeMax, as the broker's set does", async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const revokeMax = 5;
    const broker = createBroker(url, { namespace, revokeMax, logger: silent });
    const { log, lines } = captureLog();
    const worker = makeWorker({ broker, ledger, app, concurrency: 1, logger: log });
    try {
      await worker.start();
      const client = makeClient(url, namespace);
      const running = await client.enqueue('stubborn', [600_000]);
      await expect.poll(() => runs(ledger).map((r) => r.id)).toEqual([running.id]);
      // Many revokes within revokeTtl: the broker keeps revokeMax of them, and so must the node.
      const delayed = await client.enqueueMany(
        Array.from({ length: 40 }, (_, i) => ({ name: 'record', args: [i], options: { delay: '1h' } })),
      );
      for (const job of delayed) expect(await job.revoke()).toMatchObject({ outcome: 'revoked' });
      // The last request: once the node says it heard it, it has taken every one before it.
      await running.revoke();
      await expect
        .poll(() => lines.some((l) => l.msg === 'revoked job is running: it runs on (no terminate)'), {
          timeout: 30_000,
        })
        .toBe(true);
      expect(worker.stats().revoked).toBe(revokeMax);
    } finally {
      await worker.stop({ cold: true });
      await broker.close();
    }
  });
});
