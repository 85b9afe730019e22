/**
 * The Worker's hot path at its defaults: the prefetch sizes itself from what
 * the node measures (within its cap, and `prefetchMultiplier` still fixes
 * it), `fair` never writes a job into a busy child's pipe however much is
 * prefetched, and results ride in batches under load while an idle node's
 * result leaves at once.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { SettleBatchCounts, WorkerOptions } from 'prefork';
import { PREFETCH_MAX, PREFETCH_MAX_PER_PROCESS } from '../../dist/consumer/prefetch.js';
import { brokerFor, cleanup, makeClient, makeWorker, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

const concurrency = 2;

function batchesIn(b: SettleBatchCounts): number {
  return b.immediate + b.carried + b.timer + b.full + b.released;
}

describe('Worker prefetch over Redis', () => {
  const setup = () => {
    const broker = inject('redisUrl');
    const namespace = uniqueName('ns');
    return { broker, namespace, client: makeClient(broker, namespace) };
  };

  it('by default grows past 4 per child under a backlog of quick jobs, and stays within its cap', async () => {
    const { broker, namespace, client } = setup();
    const n = 3_000;
    await client.enqueueMany(
      Array.from({ length: n }, (_, i) => ({ name: 'add', args: [i, 1], options: { ignoreResult: true } })),
    );
    const worker = makeWorker({ broker, namespace, concurrency });
    await worker.start();
    const limits: number[] = [];
    await expect
      .poll(
        () => {
          const { consumer } = worker.stats();
          limits.push(consumer.prefetchLimit);
          return consumer.succeeded;
        },
        { timeout: 60_000, interval: 5, message: 'the backlog drained' },
      )
      .toBe(n);
    const { consumer } = worker.stats();
    expect(consumer.peakReserved).toBeGreaterThan(4 * concurrency);
    // Quick jobs may be held past 64 per child (PREFETCH_WORK_MS of them: the unit tests pin the rule), never past the node's cap.
    expect(Math.max(...limits, consumer.prefetchLimit)).toBeLessThanOrEqual(PREFETCH_MAX);
    expect(consumer.peakReserved).toBeLessThanOrEqual(PREFETCH_MAX);
  });

  /** A worker with `options` drains `n` quick jobs enqueued before it starts: its consumer's counts once done. */
  const drain = async (n: number, options: Partial<WorkerOptions>) => {
    const { broker, namespace, client } = setup();
    await client.enqueueMany(
      Array.from({ length: n }, (_, i) => ({ name: 'add', args: [i, 1], options: { ignoreResult: true } })),
    );
    const worker = makeWorker({ broker, namespace, concurrency, ...options });
    await worker.start();
    await expect
      .poll(() => worker.stats().consumer.succeeded, { timeout: 60_000, message: 'the backlog drained' })
      .toBe(n);
    return worker.stats().consumer;
  };

  it("with fcfs (the jobs held wait in the children's pipes, where none can be given back) never holds past 64 per child", async () => {
    const consumer = await drain(3_000, { strategy: 'fcfs' });
    expect(consumer.peakReserved).toBeGreaterThan(4 * concurrency);
    expect(consumer.peakReserved).toBeLessThanOrEqual(PREFETCH_MAX_PER_PROCESS * concurrency);
  });

  it('an explicit prefetchMultiplier still fixes the limit', async () => {
    const consumer = await drain(1_000, { prefetchMultiplier: 4 });
    expect(consumer.prefetchLimit).toBe(4 * concurrency);
    expect(consumer.peakReserved).toBe(4 * concurrency);
  });

  it(
    'fair writes no job into a busy child: quick jobs all finish beside a long one however many are prefetched',
    { timeout: 60_000 },
    async () => {
      const { broker, namespace, client } = setup();
      // The long job takes one child; had any quick job been written behind it, that one would wait the minute out.
      const long = await client.enqueue('record', [60_000]);
      const quick = await client.enqueueMany(Array.from({ length: 400 }, (_, i) => ({ name: 'echo', args: [i] })));
      const worker = makeWorker({ broker, namespace, concurrency, strategy: 'fair' });
      await worker.start();
      const values = await Promise.all(quick.map((j) => j.result({ timeout: 30_000 })));
      expect(values).toEqual(quick.map((_, i) => i));
      expect((await long.state())?.state).not.toBe('SUCCESS');
      expect(worker.stats().pool.processes.some((p) => p.current?.id === long.id)).toBe(true);
      expect(worker.stats().consumer.peakReserved).toBeGreaterThan(4 * concurrency);
    },
  );
});

describe.each(['memory', 'redis'] as const)('Worker results over %s', (kind) => {
  const setup = () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    return { broker, namespace };
  };

  it('under load, results leave in batches and every waiter gets each of its results, in order', async () => {
    const { broker, namespace } = setup();
    const clients = [makeClient(broker, namespace), makeClient(broker, namespace)];
    const n = 600;
    const handles = await Promise.all(
      clients.map((c, k) =>
        c.enqueueMany(Array.from({ length: n }, (_, i) => ({ name: 'echo', args: [`${k}:${i}`] }))),
      ),
    );
    // One child: jobs finish in the order they were enqueued, so results must be announced in that order too.
    const worker = makeWorker({ broker, namespace, concurrency: 1 });
    const order: string[][] = [[], []];
    const all = handles.flatMap((hs, k) =>
      hs.map((h) => h.result({ timeout: 60_000 }).then((v) => (order[k]!.push(v as string), v))),
    );
    await worker.start();
    const values = await Promise.all(all);
    expect(values).toEqual(handles.flatMap((hs, k) => hs.map((_, i) => `${k}:${i}`)));
    expect(order[0]).toEqual(Array.from({ length: n }, (_, i) => `0:${i}`));
    expect(order[1]).toEqual(Array.from({ length: n }, (_, i) => `1:${i}`));
    await worker.stop();
    const { settleBatches } = worker.stats();
    // Fewer batches than jobs: results rode together (on fetches, or gathered by the timer).
    expect(batchesIn(settleBatches)).toBeLessThan(2 * n);
    expect(settleBatches.carried + settleBatches.timer + settleBatches.full).toBeGreaterThan(0);
  });

  it("an idle worker's single job gets its result sent at once, not after a batch timer", async () => {
    const { broker, namespace } = setup();
    const client = makeClient(broker, namespace);
    const worker = makeWorker({ broker, namespace, concurrency });
    await worker.start();
    // Warm: one job through, so the node is idle and waiting for work with nothing held.
    expect(await (await client.enqueue('add', [1, 1])).result({ timeout: 30_000 })).toBe(2);
    await expect.poll(() => worker.stats().unacked).toBe(0);
    const before = worker.stats().settleBatches;
    expect(await (await client.enqueue('add', [2, 3])).result({ timeout: 30_000 })).toBe(5);
    const after = worker.stats().settleBatches;
    expect(after).toEqual({ ...before, immediate: before.immediate + 1 });
  });
});
