/**
 * Unique jobs and explicit ids, with real workers over both brokers: while a
 * job with the same unique key (the task and its arguments, or a key of
 * yours) waits, is delayed, retries or runs, enqueueing another adds nothing
 * and returns that job's handle (`duplicate`); the key is free once the job
 * ends or its ttl passes. The same explicit id enqueued twice runs once.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { OptionError } from 'prefork';
import type { Broker } from '../../dist/broker/types.js';
import {
  brokerFor,
  cleanup,
  countsOf,
  makeClient,
  makeWorker,
  newLedger,
  readLedger,
  startNode,
  uniqueName,
} from '../helpers/worker.js';
import { waitUntil } from '../helpers/wait.js';

afterEach(cleanup);

describe.each(['memory', 'redis'] as const)('unique jobs over %s', (kind) => {
  const setup = () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    return { broker, namespace, client: makeClient(broker, namespace) };
  };

  it('enqueued twice while the first waits: one job, one run; free again once it ended', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    const first = await client.enqueue('record', [0], { unique: true });
    const second = await client.enqueue('record', [0], { unique: true });
    expect(first.duplicate).toBe(false);
    expect(second).toMatchObject({ id: first.id, duplicate: true });
    // Other arguments are another key.
    const other = await client.enqueue('record', [1], { unique: true });
    expect(other.duplicate).toBe(false);
    await makeWorker({ broker, namespace, ledger }).start();
    expect(await second.result()).toBe(first.id);
    expect(await first.result()).toBe(first.id);
    await other.result();
    expect(readLedger(ledger).filter((r) => r.id === first.id)).toHaveLength(1);
    expect(readLedger(ledger)).toHaveLength(2);
    // Ended: the key is free, a new job runs.
    const again = await client.enqueue('record', [0], { unique: true });
    expect(again.duplicate).toBe(false);
    expect(again.id).not.toBe(first.id);
    expect(await again.result()).toBe(again.id);
  });

  it('a key of your own: held while the job runs, whatever its arguments', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    await makeWorker({ broker, namespace, ledger }).start();
    const key = uniqueName('report');
    const running = await client.enqueue('record', [60_000], { unique: { key } });
    await expect.poll(() => readLedger(ledger).length, { message: 'the job started' }).toBe(1);
    const dup = await client.enqueue('record', [5], { unique: { key } });
    expect(dup).toMatchObject({ id: running.id, duplicate: true });
    // The same arguments without `unique` are not held back.
    expect((await client.enqueue('record', [60_000])).duplicate).toBe(false);
  });

  it('held while delayed and while a retry waits; free once the job failed for good', async () => {
    const { broker, namespace, client } = setup();
    const delayed = await client.enqueue('add', [1, 2], { unique: true, delay: '1h' });
    expect(await client.enqueue('add', [1, 2], { unique: true })).toMatchObject({ id: delayed.id, duplicate: true });

    await makeWorker({ broker, namespace }).start();
    const k = uniqueName('k');
    const retrying = await client.enqueue('flaky', [k, 99], {
      unique: true,
      retries: 1,
      backoff: { type: 'fixed', delay: '1h', jitter: false },
    });
    await expect.poll(async () => (await retrying.state())?.state).toBe('RETRY');
    expect(await client.enqueue('flaky', [k, 99], { unique: true })).toMatchObject({
      id: retrying.id,
      duplicate: true,
    });

    const failing = await client.enqueue('flaky', [uniqueName('k'), 99], { unique: { key: 'once' } });
    await expect(failing.result()).rejects.toThrow('flaky attempt 1');
    expect((await client.enqueue('add', [1, 1], { unique: { key: 'once' } })).duplicate).toBe(false);
  });

  it('with a ttl the key is released even while the job waits', async () => {
    const { client } = setup();
    const first = await client.enqueue('add', [1, 2], { queue: 'nobody', unique: { key: 'short', ttl: 1 } });
    // After 1 ms the key is free: the next enqueue adds a second job (no worker consumes 'nobody').
    await expect
      .poll(
        async () =>
          (await client.enqueue('add', [1, 2], { queue: 'nobody', unique: { key: 'short', ttl: '1h' } })).duplicate,
      )
      .toBe(false);
    expect(await client.enqueue('add', [1, 2], { queue: 'nobody', unique: { key: 'short' } })).toMatchObject({
      duplicate: true,
    });
    expect((await first.state())?.state).toBe('PENDING');
  });

  it('a revoked job frees its key and its place', async () => {
    const { client } = setup();
    const first = await client.enqueue('add', [4, 4], { queue: 'nobody', unique: true });
    expect(await client.revoke(first.id)).toMatchObject({ outcome: 'revoked', removed: true });
    expect(await first.state()).toMatchObject({ state: 'REVOKED' });
    const next = await client.enqueue('add', [4, 4], { queue: 'nobody', unique: true });
    expect(next.duplicate).toBe(false);
    expect(await next.state()).toMatchObject({ state: 'PENDING', queue: 'nobody' });
  });

  it('an own id revoked while it waits is known while its REVOKED result is kept: enqueued again, that job', async () => {
    const { broker, namespace, client } = setup();
    const id = uniqueName('job');
    const first = await client.enqueue('add', [4, 4], { queue: 'q', id });
    expect(await client.revoke(id)).toMatchObject({ outcome: 'revoked', removed: true });
    // Not a new job that no node would run (the id is revoked): the one that ended, as after a node settled it.
    const again = await client.enqueue('add', [4, 4], { queue: 'q', id });
    expect(again).toMatchObject({ id: first.id, duplicate: true });
    await makeWorker({ broker, namespace, queues: 'q' }).start();
    await expect(again.result({ timeout: 20_000 })).rejects.toMatchObject({ name: 'RevokedError' });
    expect((await countsOf(client, ['q']))[0]).toMatchObject({ waiting: 0, reserved: 0 });
  });

  it('a job purged or taken out frees its key: a later job reusing its id does not hold that key', async () => {
    const { client } = setup();
    const admin = client.broker as Broker;
    const key = uniqueName('report');
    const id = uniqueName('job');
    await client.enqueue('add', [1, 1], { queue: 'nobody', id, unique: { key } });
    expect(await admin.purge('nobody')).toBe(1);
    // Another job, no unique option, with the purged job's id (its own ids are the producer's to reuse).
    expect((await client.enqueue('echo', ['other'], { queue: 'nobody', id })).duplicate).toBe(false);
    // The key is free: that job does not hold it.
    const next = await client.enqueue('add', [1, 1], { queue: 'nobody', unique: { key } });
    expect(next.duplicate).toBe(false);
    expect(next.id).not.toBe(id);

    // Taken out of its queue (removeWaiting, as a revoke does), delayed or waiting: the same.
    for (const delay of [undefined, '1h'] as const) {
      const taken = uniqueName('job');
      const other = uniqueName('report');
      await client.enqueue('add', [2, 2], { queue: 'nobody', id: taken, unique: { key: other }, delay });
      expect(await admin.removeWaiting(taken)).toBeDefined();
      expect((await client.enqueue('echo', ['other'], { queue: 'nobody', id: taken })).duplicate).toBe(false);
      expect((await client.enqueue('add', [2, 2], { queue: 'nobody', unique: { key: other } })).duplicate).toBe(false);
    }
  });

  it('a dead job put back by a dead-set retry holds its key again while it waits', async () => {
    const { broker, namespace, client } = setup();
    const key = uniqueName('report');
    const failing = await client.enqueue('flaky', [uniqueName('k'), 99], { queue: 'once', unique: { key } });
    const worker = makeWorker({ broker, namespace, queues: 'once' });
    await worker.start();
    await expect(failing.result()).rejects.toThrow('flaky attempt 1');
    await worker.stop();
    const admin = client.broker as Broker;
    expect(await admin.retryDead('once', [failing.id])).toBe(1);
    // It waits again: an equal enqueue returns it rather than adding a second job with its key.
    expect(await client.enqueue('flaky', [uniqueName('k'), 99], { queue: 'once', unique: { key } })).toMatchObject({
      id: failing.id,
      duplicate: true,
    });

    // A key another job took meanwhile stays that job's: the retry does not take it over.
    const other = uniqueName('report');
    const dead = await client.enqueue('flaky', [uniqueName('k'), 99], { queue: 'twice', unique: { key: other } });
    const second = makeWorker({ broker, namespace, queues: 'twice' });
    await second.start();
    await expect(dead.result()).rejects.toThrow('flaky attempt 1');
    await second.stop();
    const holder = await client.enqueue('add', [1, 1], { queue: 'nobody', unique: { key: other } });
    expect(holder.duplicate).toBe(false);
    expect(await admin.retryDead('twice', [dead.id])).toBe(1);
    expect(await client.enqueue('add', [2, 2], { queue: 'nobody', unique: { key: other } })).toMatchObject({
      id: holder.id,
      duplicate: true,
    });
  });

  it('a dead-set retry gives the key back for its ttl again, not until the job ends', async () => {
    const { broker, namespace, client } = setup();
    const key = uniqueName('report');
    const unique = { key, ttl: '5s' };
    const failing = await client.enqueue('flaky', [uniqueName('k'), 99], { queue: 'ttl-once', unique });
    const worker = makeWorker({ broker, namespace, queues: 'ttl-once', ledger: newLedger() });
    await worker.start();
    await expect(failing.result()).rejects.toThrow('flaky attempt 1');
    await worker.stop();
    const admin = client.broker as Broker;
    expect(await admin.retryDead('ttl-once', [failing.id])).toBe(1);
    expect(await client.enqueue('add', [1, 1], { queue: 'nobody', unique })).toMatchObject({
      id: failing.id,
      duplicate: true,
    });
    // No node consumes its queue: it waits on, and its key is released once the ttl passes, as after an enqueue.
    await waitUntil(
      async () => !(await client.enqueue('add', [1, 1], { queue: 'nobody', unique })).duplicate,
      'the key was released after its ttl',
    );
    expect((await countsOf(client, ['ttl-once']))[0]).toMatchObject({ waiting: 1, dead: 0 });
  });

  it('in one batch, and from clients racing: one job per key', async () => {
    const { broker, namespace, client } = setup();
    const batch = await client.enqueueMany([
      { name: 'add', args: [2, 2], options: { unique: true } },
      { name: 'add', args: [2, 2], options: { unique: true } },
      { name: 'add', args: [2, 3], options: { unique: true } },
    ]);
    expect(batch.map((h) => h.duplicate)).toEqual([false, true, false]);
    expect(batch[1]?.id).toBe(batch[0]?.id);

    const clients = [client, makeClient(broker, namespace), makeClient(broker, namespace)];
    const raced = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        clients[i % 3]!.enqueue('add', [7, 7], { queue: 'nobody', unique: { key: 'race' } }),
      ),
    );
    expect(new Set(raced.map((h) => h.id)).size).toBe(1);
    expect(raced.filter((h) => !h.duplicate)).toHaveLength(1);
  });

  it('the same explicit id twice: the first job, run once, also after it ended', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    const id = uniqueName('job');
    const first = await client.enqueue('record', [0], { id });
    const second = await client.enqueue('record', [0], { id });
    expect(first.duplicate).toBe(false);
    expect(second).toMatchObject({ id, duplicate: true });
    await makeWorker({ broker, namespace, ledger }).start();
    expect(await first.result()).toBe(id);
    // Ended, its result kept: still the same job.
    const third = await client.enqueue('record', [0], { id });
    expect(third).toMatchObject({ id, duplicate: true });
    expect(await third.result()).toBe(id);
    expect(readLedger(ledger).filter((r) => r.id === id)).toHaveLength(1);
  });

  it('bad unique options are refused, naming what was wrong, and add nothing', async () => {
    const { client } = setup();
    for (const [unique, says] of [
      ['yes', /unique/],
      [{ key: '' }, /unique\.key/],
      [{ ttl: 'soon' }, /unique\.ttl/],
      [{ ttl: 0 }, /unique\.ttl/],
      [{ keys: 'x' }, /keys/],
      // A lone surrogate: Redis stores it as U+FFFD, so 'x\ud800' and 'x\udc00' would be one key.
      [{ key: 'x\ud800' }, /unique\.key/],
    ] as const) {
      await expect(client.enqueue('add', [1, 2], { queue: 'nobody', unique: unique as never })).rejects.toThrow(
        OptionError,
      );
      await expect(client.enqueue('add', [1, 2], { queue: 'nobody', unique: unique as never })).rejects.toThrow(says);
    }
    expect((await client.enqueue('add', [1, 2], { queue: 'nobody', unique: true })).duplicate).toBe(false);
  });

  it('an own id with a lone surrogate is refused: two such ids would be one job in Redis', async () => {
    const { client } = setup();
    await expect(client.enqueue('add', [1, 2], { queue: 'nobody', id: 'job-\ud800' })).rejects.toThrow(OptionError);
    expect((await client.enqueue('add', [1, 2], { queue: 'nobody', id: uniqueName('job-\u{1F600}') })).duplicate).toBe(
      false,
    );
  });
});

describe('unique jobs over redis: a poison job', () => {
  it('with its own id, buried by a recovery: enqueued again while its FAILURE is kept, it is not run again', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const options = { broker: url, namespace, concurrency: 1, leaseMs: 1_500, maxRedeliveries: 0 };
    const client = makeClient(url, namespace);
    const id = uniqueName('poison');
    const key = uniqueName('key');
    const job = await client.enqueue('record', [600_000], { id, unique: { key } });
    const node = await startNode({ ...options, name: 'node-a' }, ledger);
    await waitUntil(() => readLedger(ledger).length === 1, 'node A runs the job');
    node.proc.kill('SIGKILL');
    await node.exited;
    // Recovered past maxRedeliveries: dead, its FAILURE stored by the recovery (no node settles it).
    await makeWorker({ ...options, ledger, name: 'node-b' }).start();
    await expect(job.result({ timeout: 20_000 })).rejects.toMatchObject({ name: 'WorkerLostError' });
    // The same id again: that job (ended, its result kept), not a second run of a job that kills its node.
    expect(await client.enqueue('record', [600_000], { id })).toMatchObject({ id, duplicate: true });
    // Its unique key is free: the job failed for good.
    const next = await client.enqueue('record', [0], { unique: { key } });
    expect(next.duplicate).toBe(false);
    await next.result({ timeout: 20_000 });
    expect(readLedger(ledger).map((r) => r.id)).toEqual([id, next.id]);
  });
});
