/**
 * A pool that fails under a running Worker (its children keep dying before
 * they can work): the node stops by itself, every job it held — buffered and
 * running — goes back to its queue (none dead), it leaves the cluster, and
 * it says why ('failed' event; start() rejects when it happens at start).
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PoolFailedError } from 'prefork';
import { createBroker } from 'prefork/broker';
import {
  cleanup,
  fixture,
  makeClient,
  makeWorker,
  newLedger,
  readLedger,
  silent,
  uniqueName,
  waitUntil,
} from '../helpers/worker.js';

afterEach(cleanup);

describe('Worker whose pool fails', () => {
  it('after start: stops fetching, gives back every job it held (buffered and running), unregisters, emits failed', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const marker = join(dirname(ledger), 'broken');
    // Each child runs one job and is replaced; once the marker exists, the replacements cannot load the module.
    const worker = makeWorker({
      app: fixture('breaks-after-start.mjs'),
      broker: url,
      namespace,
      ledger,
      concurrency: 2,
      prefetchMultiplier: 4,
      maxTasksPerChild: 1,
      pool: { maxRestarts: 1, restartWindow: 60_000, env: { PREFORK_TEST_BREAK: marker } },
    });
    const failed = new Promise<PoolFailedError>((resolve) => worker.once('failed', resolve));
    await worker.start();
    const nodeId = worker.nodeId;
    writeFileSync(marker, '');
    const client = makeClient(url, namespace);
    // The short job frees a child, which is replaced by one that cannot load: the pool fails while
    // the other child runs a long job and the rest wait in the node's buffer.
    const [short, ...long] = await client.enqueueMany([
      { name: 'record', args: [0] },
      ...Array.from({ length: 6 }, () => ({ name: 'record' as const, args: [30_000] })),
    ]);

    const err = await failed;
    expect(err).toBeInstanceOf(PoolFailedError);
    expect(err.message).toMatch(/deploy broke/);
    expect(worker.failed).toBe(err);

    const broker = createBroker(url, { namespace, logger: silent });
    await broker.connect();
    try {
      expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: long.length, reserved: 0, dead: 0 });
      expect((await broker.listNodes()).map((n) => n.id)).not.toContain(nodeId);
    } finally {
      await broker.close();
    }
    expect((await short!.state())?.state).toBe('SUCCESS');
    for (const j of long) expect((await j.state())?.state ?? 'PENDING').toBe('PENDING');
    // One long job was running when the pool killed its children: given back with the buffered ones, nothing failed.
    const ran = readLedger(ledger).map((r) => r.id);
    expect(ran).toHaveLength(2);
    expect(ran).toContain(short!.id);
    expect(worker.stats().consumer).toMatchObject({ fetched: 7, succeeded: 1, givenBack: 6, dead: 0, retried: 0 });
  });

  it('during a warm stop: the stop ends, failed is set and emitted (the process can exit non-zero)', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const marker = join(dirname(ledger), 'broken');
    const worker = makeWorker({
      app: fixture('crashes-when-broken.mjs'),
      broker: url,
      namespace,
      ledger,
      concurrency: 2,
      pool: { env: { PREFORK_TEST_BREAK: marker } },
    });
    const failed = new Promise<PoolFailedError>((resolve) => worker.once('failed', resolve));
    await worker.start();
    const client = makeClient(url, namespace);
    await client.enqueue('record', [600_000]);
    await client.enqueue('crashWhenBroken', []);
    await waitUntil(() => readLedger(ledger).length === 2, 'both jobs started');
    // The warm stop waits for the long job; meanwhile a child dies and no replacement can load.
    const stopped = worker.stop();
    writeFileSync(marker, '');
    await stopped;
    expect(worker.failed).toBeInstanceOf(PoolFailedError);
    expect(await failed).toBe(worker.failed);
  });

  it('at start: start() rejects with PoolFailedError and the node does not stay registered', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const worker = makeWorker({
      app: fixture('throws-on-import.mjs'),
      broker: url,
      namespace,
      concurrency: 1,
      pool: { maxRestarts: 1, restartWindow: 60_000 },
    });
    await expect(worker.start()).rejects.toBeInstanceOf(PoolFailedError);
    const broker = createBroker(url, { namespace, logger: silent });
    await broker.connect();
    try {
      expect(await broker.listNodes()).toEqual([]);
    } finally {
      await broker.close();
    }
  });
});
