/**
 * A fenced node drops the jobs it held but had not started (another node
 * recovered them): its log says how many, counting those already written
 * into a child's pipe (fcfs) as well as those in the pool's buffer.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  captureLog,
  cleanup,
  makeClient,
  makeWorker,
  newLedger,
  readLedger,
  uniqueName,
  waitUntil,
} from '../helpers/worker.js';

afterEach(cleanup);

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
    await waitUntil(
      () => readLedger(ledger).length === 1 && worker.stats().consumer.fetched === 4,
      'one job runs, three wait in the node',
    );
    const before = worker.nodeId;
    // As after a stall past the lease (only then are jobs dropped: another node may have recovered them).
    (worker as unknown as { heartbeat: { leaseUntil: number } }).heartbeat.leaseUntil = -Infinity;
    await (worker as unknown as { fenced(seenAs: string): Promise<void> }).fenced(before);
    await waitUntil(
      () => lines.some((l) => l.oldNodeId === before && typeof l.dropped === 'number'),
      'the count of dropped jobs is logged',
    );
    expect(lines.find((l) => l.oldNodeId === before && typeof l.dropped === 'number')).toMatchObject({ dropped: 3 });
    // The running job carries on; nothing was given back (the jobs belong to whoever recovered them).
    expect(worker.stats().consumer).toMatchObject({ reserved: 1, givenBack: 0 });
    expect(readLedger(ledger)).toHaveLength(1);
  });
});
