/**
 * The Worker end to end — Client → broker → Consumer → Pool → children and
 * back — over both brokers: the embedded memory:// one and a real Redis.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { encodeBody } from '../../dist/protocol/codec.js';
import type { ScaleEvent } from 'prefork';
import { createBroker } from 'prefork/broker';
import {
  brokerFor,
  cleanup,
  makeClient,
  makeWorker,
  newLedger,
  readLedger,
  silent,
  uniqueName,
} from '../helpers/worker.js';

afterEach(cleanup);

describe.each(['memory', 'redis'] as const)('Worker over %s', (kind) => {
  const setup = () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    return { broker, namespace, client: makeClient(broker, namespace) };
  };

  it('runs jobs and returns their results with node, pid, runtime and retries', async () => {
    const { broker, namespace, client } = setup();
    const worker = makeWorker({ broker, namespace, name: 'node-a' });
    await worker.start();
    const job = await client.enqueue('add', [2, 3]);
    expect(await job.result()).toBe(5);
    const record = await job.state();
    expect(record).toMatchObject({
      id: job.id,
      task: 'add',
      queue: 'default',
      state: 'SUCCESS',
      value: 5,
      node: 'node-a',
      retries: 0,
    });
    expect(typeof record?.pid).toBe('number');
    expect(record?.runtime).toBeGreaterThanOrEqual(0);
  });

  it('gives the task its id, name, queue and retries', async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace, queues: 'other' }).start();
    const job = await client.enqueue('ctx', [], { queue: 'other', id: 'my-id-1' });
    expect(await job.result()).toEqual({ id: 'my-id-1', name: 'ctx', queue: 'other', retries: 0 });
  });

  it('a failing task without retries → FAILURE with the error, and the dead set', async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    const job = await client.enqueue('flaky', [uniqueName('k'), 99]);
    await expect(job.result()).rejects.toMatchObject({ message: 'flaky attempt 1' });
    expect((await job.state())?.state).toBe('FAILURE');
    const b = createBroker(broker, { namespace, logger: silent });
    await b.connect();
    try {
      const dead = await b.listDead('default', 10);
      expect(dead.map((d) => d.job.id)).toEqual([job.id]);
    } finally {
      await b.close();
    }
  });

  it('retries with backoff until the task succeeds', async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    const job = await client.enqueue('flaky', [uniqueName('k'), 3], { retries: 5, backoff: { delay: 20 } });
    expect(await job.result()).toBe(3);
    expect((await job.state())?.retries).toBe(2);
  });

  it('throw new Retry() from a task asks for another attempt', async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    const job = await client.enqueue('retryMe', [uniqueName('k'), 2]);
    expect(await job.result()).toBe(1);
  });

  it("a Retry with its retries spent → FAILURE as MaxRetriesExceededError (Celery's), the Retry its cause", async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    const job = await client.enqueue('retryMe', [uniqueName('k'), 99], { retries: 2 });
    const err = await job.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: 'MaxRetriesExceededError', code: 'PREFORK_MAX_RETRIES_EXCEEDED' });
    expect((err as Error).message).toBe('retries spent (2): retry requested');
    expect((err as Error).cause).toMatchObject({ name: 'Retry', code: 'PREFORK_RETRY' });
    expect((await job.state())?.retries).toBe(2);
  });

  it('spent retries → FAILURE naming the retries, in the dead set', async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    const job = await client.enqueue('flaky', [uniqueName('k'), 99], { retries: 2, backoff: { delay: 10 } });
    await expect(job.result()).rejects.toMatchObject({ message: 'flaky attempt 3' });
    expect((await job.state())?.retries).toBe(2);
  });

  it('a child killed mid-job counts as a failure: WorkerLostError once retries are spent', async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    const job = await client.enqueue('crash', [], { retries: 1, backoff: { delay: 10 } });
    await expect(job.result()).rejects.toMatchObject({ name: 'WorkerLostError' });
    expect((await job.state())?.retries).toBe(1);
    expect(await (await client.enqueue('add', [1, 1])).result()).toBe(2);
  });

  it("a task's own time limit fails the job with TimeLimitExceeded", async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    await expect((await client.enqueue('slowWithLimit')).result()).rejects.toMatchObject({ name: 'TimeLimitExceeded' });
  });

  it.each([
    ['an unknown task', 'noSuchTask', 'UnknownTaskError'],
    ['a result that does not serialize', 'returnsFunction', 'ResultSerializationError'],
  ])('%s fails at once into the dead set, and the node carries on', async (_, task, errorName) => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    const job = await client.enqueue(task, [], { retries: 3 });
    await expect(job.result()).rejects.toMatchObject({ name: errorName });
    expect((await job.state())?.retries).toBe(0);
    expect(await (await client.enqueue('add', [1, 2])).result()).toBe(3);
  });

  it('a payload that does not decode fails with PayloadDecodeError, and the node carries on', async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    const b = createBroker(broker, { namespace, logger: silent });
    await b.connect();
    try {
      await b.enqueue([
        {
          id: 'garbage-1',
          task: 'add',
          queue: 'default',
          payload: new Uint8Array([0xc1, 0xff, 0x00]),
          attempt: 0,
          redeliveries: 0,
          options: {},
          enqueuedAt: Date.now(),
          replyTo: client.id,
        },
      ]);
      await expect(client.handle('garbage-1').result()).rejects.toMatchObject({ name: 'PayloadDecodeError' });
      expect((await b.listDead('default', 10)).map((d) => d.job.id)).toEqual(['garbage-1']);
    } finally {
      await b.close();
    }
    expect(await (await client.enqueue('add', [1, 2])).result()).toBe(3);
  });

  it('ignoreResult: the job runs and no result is stored', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    await makeWorker({ broker, namespace, ledger }).start();
    const job = await client.enqueue('record', [], { ignoreResult: true });
    await expect.poll(() => readLedger(ledger).length, { message: 'the job ran' }).toBe(1);
    await expect(job.result()).rejects.toThrow(/ignoreResult/);
    // The ack and any result write go out together: once a later job's result is back, the first job's outcome is settled.
    expect(await (await client.enqueue('add', [1, 1])).result()).toBe(2);
    expect(await job.state()).toBeUndefined();
  });

  it('delayed jobs run in due order and never before they are due', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    await makeWorker({ broker, namespace, ledger, concurrency: 1 }).start();
    const enqueuedAt = Date.now();
    const jobs = await client.enqueueMany([
      { name: 'record', options: { delay: 600, id: 'late' } },
      { name: 'record', options: { delay: 300, id: 'middle' } },
      { name: 'record', options: { id: 'now' } },
    ]);
    await Promise.all(jobs.map((j) => j.result()));
    const ran = readLedger(ledger);
    expect(ran.map((r) => r.id)).toEqual(['now', 'middle', 'late']);
    expect(ran[1]!.at - enqueuedAt).toBeGreaterThanOrEqual(300);
    expect(ran[2]!.at - enqueuedAt).toBeGreaterThanOrEqual(600);
  });

  it('strict queue order: nothing from a lower queue while a higher one has jobs', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    await client.enqueueMany([
      ...Array.from({ length: 10 }, () => ({ name: 'record', options: { queue: 'low' } })),
      ...Array.from({ length: 10 }, () => ({ name: 'record', options: { queue: 'high' } })),
    ]);
    await makeWorker({
      broker,
      namespace,
      ledger,
      concurrency: 1,
      prefetchMultiplier: 1,
      queues: 'high,low',
      queueOrder: 'strict',
    }).start();
    await expect.poll(() => readLedger(ledger).length, { message: 'all 20 jobs ran' }).toBe(20);
    expect(readLedger(ledger).map((r) => r.queue)).toEqual([
      ...Array<string>(10).fill('high'),
      ...Array<string>(10).fill('low'),
    ]);
  });

  it('round-robin: the queue last used goes to the end', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    await client.enqueueMany(
      ['a', 'b'].flatMap((queue) => Array.from({ length: 6 }, () => ({ name: 'record', options: { queue } }))),
    );
    await makeWorker({ broker, namespace, ledger, concurrency: 1, prefetchMultiplier: 1, queues: 'a,b' }).start();
    await expect.poll(() => readLedger(ledger).length, { message: 'all 12 jobs ran' }).toBe(12);
    expect(
      readLedger(ledger)
        .map((r) => r.queue)
        .join(''),
    ).toBe('abababababab');
  });

  it('weighted: shares follow the weights, loosely, over many jobs', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    await client.enqueueMany(
      ['heavy', 'light'].flatMap((queue) =>
        Array.from({ length: 300 }, () => ({ name: 'record', options: { queue, ignoreResult: true } })),
      ),
    );
    await makeWorker({
      broker,
      namespace,
      ledger,
      concurrency: 1,
      prefetchMultiplier: 1,
      queues: 'heavy:3,light:1',
    }).start();
    await expect.poll(() => readLedger(ledger).length, { message: '200 jobs ran' }).toBeGreaterThanOrEqual(200);
    const first = readLedger(ledger).slice(0, 200);
    const heavy = first.filter((r) => r.queue === 'heavy').length / first.length;
    expect(heavy).toBeGreaterThan(0.6);
    expect(heavy).toBeLessThan(0.9);
  });

  it('warm stop gives buffered jobs back, finishes the running ones, and a new node runs the rest', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    const worker = makeWorker({ broker, namespace, ledger, concurrency: 1, prefetchMultiplier: 8 });
    await worker.start();
    const jobs = await client.enqueueMany(Array.from({ length: 8 }, () => ({ name: 'record', args: [200] })));
    await expect.poll(() => readLedger(ledger).length, { message: 'the first job started' }).toBeGreaterThanOrEqual(1);
    await worker.stop();
    const ranBefore = new Set(readLedger(ledger).map((r) => r.id));
    expect(worker.stats().consumer.givenBack).toBeGreaterThan(0);
    expect(ranBefore.size + worker.stats().consumer.givenBack).toBe(8);
    await makeWorker({ broker, namespace, ledger, concurrency: 2 }).start();
    await Promise.all(jobs.map((j) => j.result()));
    const runs = readLedger(ledger).map((r) => r.id);
    expect(new Set(runs).size).toBe(8);
    expect(runs.length).toBe(8); // warm: nothing ran twice
  });

  it('with autoscale the prefetch limit follows max, so a burst grows the pool', async () => {
    const { broker, namespace, client } = setup();
    const worker = makeWorker({ broker, namespace, autoscale: '3,1', pool: { keepalive: 60_000 } });
    const events: ScaleEvent[] = [];
    worker.pool.on('autoscale', (e) => events.push(e));
    await worker.start();
    expect(worker.pool.size).toBe(1);
    const jobs = await client.enqueueMany(Array.from({ length: 12 }, () => ({ name: 'record', args: [100] })));
    await Promise.all(jobs.map((j) => j.result()));
    expect(events.some((e) => e.direction === 'up' && e.to === 3)).toBe(true);
  });

  it('encoded payloads travel untouched: the parent never decodes them', async () => {
    const { broker, namespace } = setup();
    await makeWorker({ broker, namespace }).start();
    const b = createBroker(broker, { namespace, logger: silent });
    await b.connect();
    const c = makeClient(broker, namespace);
    try {
      await b.enqueue([
        {
          id: 'raw-1',
          task: 'echo',
          queue: 'default',
          payload: encodeBody([{ deep: [1, 'two', null] }]),
          attempt: 0,
          redeliveries: 0,
          options: {},
          enqueuedAt: Date.now(),
          replyTo: c.id,
        },
      ]);
      expect(await c.handle('raw-1').result()).toEqual({ deep: [1, 'two', null] });
    } finally {
      await b.close();
    }
  });

  it('a fenced node (its jobs recovered by another) re-registers under a new id and carries on', async () => {
    const { broker, namespace, client } = setup();
    const worker = makeWorker({ broker, namespace, lease: 1_000 });
    await worker.start();
    const before = worker.nodeId;
    const other = createBroker(broker, { namespace, logger: silent });
    await other.connect();
    try {
      // A stall longer than the lease (a long GC pause, an overloaded host): no heartbeat gets out.
      const end = Date.now() + 1_500;
      while (Date.now() < end);
      // What another node does when this one's lease has expired.
      expect(await other.recover(before, 'other-node', 5)).toBe(0);
      await expect.poll(() => worker.nodeId, { message: 'the worker noticed it was fenced' }).not.toBe(before);
      await expect
        .poll(async () => (await other.listNodes()).map((n) => n.id), { message: 'the worker re-registered' })
        .toContain(worker.nodeId);
      expect((await other.listNodes()).map((n) => n.id)).not.toContain(before);
      // The heartbeat and a fetch can both see the same lost lease; the later report must not fence the new id again.
      const after = worker.nodeId;
      const registered = (await other.listNodes()).map((n) => n.id).sort();
      await worker.reportFenced(before);
      expect(worker.nodeId).toBe(after);
      expect((await other.listNodes()).map((n) => n.id).sort()).toEqual(registered);
    } finally {
      await other.close();
    }
    expect(await (await client.enqueue('add', [4, 5])).result()).toBe(9);
  });
});
