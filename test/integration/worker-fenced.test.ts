/**
 * A fenced node drops the jobs it held but had not started (another node
 * recovered them): its log says how many, counting those already written
 * into a child's pipe (fcfs) as well as those in the pool's buffer.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Worker } from 'prefork';
import { captureLog, cleanup, makeClient, makeWorker, newLedger, readLedger, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

/** The deliveries the node's Redis broker tracks as handed out and not settled (its receipts, per queue). */
function handedOut(worker: Worker): number {
  const { deliveries } = worker.broker as unknown as {
    deliveries: { outstanding: { byQueue: Map<string, Set<string>> } };
  };
  return [...deliveries.outstanding.byQueue.values()].reduce((n, receipts) => n + receipts.size, 0);
}

describe('Worker fenced', () => {
  it("the 'dropped' count covers the jobs pulled back from the children's pipes", async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const { log, lines } = captureLog();
    // fcfs writes jobs into the child's pipe while it runs one.
    const worker = makeWorker({
      broker: url,
      namespace,
      ledger,
      concurrency: 1,
      prefetchMultiplier: 4,
      strategy: 'fcfs',
      logger: log,
    });
    await worker.start();
    const client = makeClient(url, namespace);
    await client.enqueueMany(Array.from({ length: 4 }, () => ({ name: 'record' as const, args: [600_000] })));
    await expect
      .poll(() => ({ started: readLedger(ledger).length, fetched: worker.stats().consumer.fetched }), {
        message: 'one job runs, three wait in the node',
      })
      .toEqual({ started: 1, fetched: 4 });
    const before = worker.nodeId;
    // As after a stall past the lease (only then are jobs dropped: another node may have recovered them).
    await worker.reportFenced(before, { leaseRanOut: true });
    await expect
      .poll(() => lines.find((l) => l.oldNodeId === before && typeof l.dropped === 'number'), {
        message: 'the count of dropped jobs is logged',
      })
      .toBeDefined();
    expect(lines.find((l) => l.oldNodeId === before && typeof l.dropped === 'number')).toMatchObject({ dropped: 3 });
    // The running job carries on; nothing was given back (the jobs belong to whoever recovered them).
    expect(worker.stats().consumer).toMatchObject({ reserved: 1, givenBack: 0 });
    expect(readLedger(ledger)).toHaveLength(1);
    // The dropped ones are never settled here: the broker no longer tracks them, or each fencing would leave its receipts for good.
    expect(handedOut(worker)).toBe(1);
  });
});
