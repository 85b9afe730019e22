/**
 * Promises the docs make about the Worker (docs/guide.md,
 * docs/failure-modes.md), each shown through the public API: an unreadable
 * queue entry, outcomes held while Redis is away,
 * trackStarted, maxRedeliveries, two nodes on one queue at the same time,
 * the pool's execArgv reaching children, and $PREFORK_BROKER_URL as the
 * default broker.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Worker, type ResultRecord } from 'prefork';
import { createBroker } from 'prefork/broker';
import {
  brokerFor,
  cleanup,
  fixture,
  makeClient,
  makeWorker,
  newLedger,
  readLedger,
  silent,
  startNode,
  uniqueName,
} from '../helpers/worker.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitUntil } from '../helpers/wait.js';

afterEach(cleanup);

describe('Worker over Redis: an unreadable queue entry', () => {
  it('goes to the dead set with a FAILURE naming what is wrong, and the node carries on', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const client = makeClient(url, namespace);
    await makeWorker({ broker: url, namespace }).start();
    // Entries another program wrote: one with an id and a task but no payload, one with nothing prefork knows.
    const raw = new Redis(url);
    const admin = createBroker(url, { namespace, logger: silent });
    try {
      await raw.xadd(`{${namespace}}:q:default`, '*', 'id', 'garbled-1', 'task', 'add');
      const nameless = await raw.xadd(`{${namespace}}:q:default`, '*', 'hello', 'world');
      await admin.connect();
      await waitUntil(async () => (await admin.listDead('default', 10)).length === 2, 'both entries are dead');
      const dead = await admin.listDead('default', 10);
      expect(dead.find((d) => d.job.id === 'garbled-1')?.reason).toMatch(/no payload/);
      expect(dead.filter((d) => d.job.id !== 'garbled-1').map((d) => d.reason)).toEqual([
        expect.stringMatching(new RegExp(`unreadable entry ${nameless}: no task name`)),
      ]);
      const failure = await client.handle('garbled-1').state();
      expect(failure).toMatchObject({ state: 'FAILURE', error: { name: 'MalformedJobError' } });
      expect(failure?.error?.message).toMatch(/no payload/);
      expect((await admin.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 0, dead: 2 });
    } finally {
      raw.disconnect();
      await admin.close();
    }
    expect(await (await client.enqueue('add', [1, 2])).result()).toBe(3);
  });
});

describe('Worker over Redis: Redis away while outcomes are pending', () => {
  it('the node keeps the outcomes it could not write and writes them when Redis is back', async () => {
    const url = inject('redisUrl');
    // The node reaches Redis through a proxy the test can cut; the client does not.
    const proxy = await TcpProxy.start(url);
    try {
      const namespace = uniqueName('ns');
      const ledger = newLedger();
      const worker = makeWorker({ broker: proxy.url, namespace, ledger, concurrency: 2 });
      await worker.start();
      const client = makeClient(url, namespace);
      const jobs = await client.enqueueMany(
        Array.from({ length: 2 }, () => ({ name: 'record' as const, args: [800] })),
      );
      await waitUntil(() => readLedger(ledger).length === 2, 'both jobs run');
      proxy.setMode('refuse');
      proxy.dropAll();
      // Both jobs end while Redis is out of reach: their outcomes wait in the node.
      await waitUntil(
        () => worker.stats().consumer.succeeded === 2 && worker.stats().unacked === 2,
        'both outcomes wait for Redis',
      );
      // No outcome stored: Redis still has both held by the node.
      expect((await Promise.all(jobs.map((j) => j.state()))).map((r) => r?.state)).toEqual(['RECEIVED', 'RECEIVED']);
      proxy.setMode('forward');
      expect(await Promise.all(jobs.map((j) => j.result({ timeout: 30_000 })))).toEqual(jobs.map((j) => j.id));
      await waitUntil(() => worker.stats().unacked === 0, 'the broker confirmed both');
      const admin = createBroker(url, { namespace, logger: silent });
      await admin.connect();
      try {
        expect((await admin.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 0, dead: 0 });
      } finally {
        await admin.close();
      }
      expect(readLedger(ledger)).toHaveLength(2);
    } finally {
      await cleanup();
      await proxy.close();
    }
  });
});

describe.each(['memory', 'redis'] as const)('Worker over %s', (kind) => {
  it('trackStarted: RECEIVED while the job waits in the node, STARTED with pid while it runs, then SUCCESS', async () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const client = makeClient(broker, namespace);
    const worker = makeWorker({ broker, namespace, ledger, concurrency: 1, trackStarted: true });
    await worker.start();
    const [first, second] = await client.enqueueMany([
      { name: 'record', args: [1_500] },
      { name: 'record', args: [0] },
    ]);
    await waitUntil(() => readLedger(ledger).length === 1, 'the first job runs');
    const states = async (): Promise<(ResultRecord | undefined)[]> => [await first!.state(), await second!.state()];
    await waitUntil(
      async () => (await states()).map((r) => r?.state).join() === 'STARTED,RECEIVED',
      'the first job is STARTED and the second RECEIVED',
    );
    const [running, waiting] = await states();
    expect(running?.state).toBe('STARTED');
    expect(typeof running?.pid).toBe('number');
    expect(typeof running?.startedAt).toBe('number');
    expect(running?.finishedAt).toBeUndefined();
    expect(waiting?.pid).toBeUndefined();
    expect(await Promise.all([first!.result(), second!.result()])).toEqual([first!.id, second!.id]);
    expect((await states()).map((r) => r?.state)).toEqual(['SUCCESS', 'SUCCESS']);
  });

  it('without trackStarted a running job is RECEIVED on its node, with no pid or start', async () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const client = makeClient(broker, namespace);
    await makeWorker({ broker, namespace, ledger, concurrency: 1 }).start();
    const job = await client.enqueue('record', [1_000]);
    await waitUntil(() => readLedger(ledger).length === 1, 'the job runs');
    const shown = await job.state();
    expect(shown).toMatchObject({ id: job.id, state: 'RECEIVED', node: expect.any(String) as string });
    expect(shown?.pid).toBeUndefined();
    expect(shown?.startedAt).toBeUndefined();
    await job.result();
    expect((await job.state())?.state).toBe('SUCCESS');
  });

  it('two live nodes on one queue at the same time: each job runs once, and both nodes work', async () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const client = makeClient(broker, namespace);
    // One job at a time each (prefetch 1): while one node runs a job, the next one must go to the other.
    for (const name of ['node-a', 'node-b'])
      await makeWorker({ broker, namespace, ledger, name, concurrency: 1, prefetchMultiplier: 1 }).start();
    const jobs = await client.enqueueMany(Array.from({ length: 12 }, () => ({ name: 'record' as const, args: [100] })));
    expect(await Promise.all(jobs.map((j) => j.result()))).toEqual(jobs.map((j) => j.id));
    const runs = readLedger(ledger).map((r) => r.id);
    expect(runs.sort()).toEqual(jobs.map((j) => j.id).sort());
    const nodes = await Promise.all(jobs.map(async (j) => (await j.state())?.node));
    expect(new Set(nodes)).toEqual(new Set(['node-a', 'node-b']));
  });

  it("the pool's execArgv reaches the children", async () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    const client = makeClient(broker, namespace);
    await makeWorker({ broker, namespace, pool: { execArgv: ['--expose-gc', '--max-old-space-size=123'] } }).start();
    expect(await (await client.enqueue('execArgv')).result()).toEqual(
      expect.arrayContaining(['--expose-gc', '--max-old-space-size=123']),
    );
  });
});

describe('Worker over Redis: maxRedeliveries', () => {
  it('a job whose nodes keep dying goes to the dead set once redelivered more often than maxRedeliveries', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const options = { broker: url, namespace, concurrency: 1, leaseMs: 1_500, maxRedeliveries: 1 };
    const client = makeClient(url, namespace);
    const job = await client.enqueue('record', [600_000]);
    // Two nodes in a row take the job and are SIGKILLed while running it: it is redelivered once (allowed).
    for (const [i, name] of ['node-a', 'node-b'].entries()) {
      const node = await startNode({ ...options, name }, ledger);
      await waitUntil(() => readLedger(ledger).length === i + 1, `${name} runs the job`);
      node.proc.kill('SIGKILL');
      await node.exited;
    }
    // The node that recovers it now finds it delivered twice: a poison job, dead instead of run a third time.
    await makeWorker({ ...options, ledger, name: 'node-c' }).start();
    const admin = createBroker(url, { namespace, logger: silent });
    await admin.connect();
    try {
      await waitUntil(async () => (await admin.listDead('default', 10)).length === 1, 'the job is dead');
      const [dead] = await admin.listDead('default', 10);
      expect(dead?.job.id).toBe(job.id);
      expect(dead?.reason).toMatch(/delivered 2 times/);
      expect((await admin.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 0, dead: 1 });
    } finally {
      await admin.close();
    }
    expect(readLedger(ledger).map((r) => r.id)).toEqual([job.id, job.id]);
  });
});

describe('Worker over Redis: a poison job', () => {
  it('buried by a recovery, fails its result() with a WorkerLostError naming why, stored for any reader', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const options = { broker: url, namespace, concurrency: 1, leaseMs: 1_500, maxRedeliveries: 0 };
    const client = makeClient(url, namespace);
    const job = await client.enqueue('record', [600_000]);
    const waited = job.result({ timeout: 20_000 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    const node = await startNode({ ...options, name: 'node-a' }, ledger);
    await waitUntil(() => readLedger(ledger).length === 1, 'node A runs the job');
    node.proc.kill('SIGKILL');
    await node.exited;
    // The node that recovers it finds it delivered once, more than maxRedeliveries: dead, and nobody settles it.
    await makeWorker({ ...options, ledger, name: 'node-b' }).start();
    const err = (await waited) as { name?: string; code?: string; message?: string } | undefined;
    expect(err).toMatchObject({ name: 'WorkerLostError', code: 'PREFORK_WORKER_LOST' });
    expect(err?.message).toMatch(/delivered 1 times without an outcome/);
    expect(await makeClient(url, namespace).getResult(job.id)).toMatchObject({
      id: job.id,
      task: 'record',
      queue: 'default',
      state: 'FAILURE',
      error: { name: 'WorkerLostError' },
    });
    expect(readLedger(ledger).map((r) => r.id)).toEqual([job.id]);
  });
});

describe('Worker: the broker by default', () => {
  const saved = process.env.PREFORK_BROKER_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.PREFORK_BROKER_URL;
    else process.env.PREFORK_BROKER_URL = saved;
  });

  it('is $PREFORK_BROKER_URL when set: the node consumes there', async () => {
    const url = `memory://${uniqueName('from-env')}`;
    process.env.PREFORK_BROKER_URL = url;
    const worker = new Worker({ app: fixture('worker-tasks.mjs'), concurrency: 1, logger: silent });
    try {
      expect(worker.broker.displayUrl).toBe(url);
      await worker.start();
      expect(await (await makeClient(url).enqueue('add', [2, 3])).result()).toBe(5);
    } finally {
      await worker.stop();
    }
  });

  it('is redis://127.0.0.1:6379 when $PREFORK_BROKER_URL is not set', () => {
    delete process.env.PREFORK_BROKER_URL;
    expect(new Worker({ app: fixture('worker-tasks.mjs'), logger: silent }).broker.displayUrl).toBe(
      'redis://127.0.0.1:6379',
    );
  });
});
