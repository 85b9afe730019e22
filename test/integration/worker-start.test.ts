/**
 * How a Worker starts: its children boot while the broker connects (the
 * slowest steps of a start overlap), so a broker that is not there yet holds
 * up nothing but the node's registration (one warning says so, however long
 * it takes), and a task module that does not load ends start() even then.
 * A broker that refuses the connection itself (a password, a database) will
 * not heal by waiting: it ends start().
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerRefusedError, PoolFailedError, WorkerStoppedError } from 'prefork';
import { freePort, startRedisServer } from '../../scripts/redis.mjs';
import { captureLog, cleanup, fixture, makeClient, makeWorker, uniqueName } from '../helpers/worker.js';
import { redisUrl } from './redis-helpers.js';

afterEach(cleanup);

describe('Worker start', { timeout: 60_000 }, () => {
  it('the children boot while the broker is unreachable; the node consumes once Redis is there', async () => {
    const port = await freePort();
    const namespace = uniqueName('ns');
    const worker = makeWorker({ broker: `redis://127.0.0.1:${port}`, namespace, concurrency: 2 });
    let started = false;
    const starting = worker.start().then(() => (started = true));
    await expect
      .poll(() => worker.pool.stats().processes.filter((p) => p.state === 'idle').length, {
        message: 'both children loaded the task module',
        timeout: 20_000,
      })
      .toBe(2);
    expect(started).toBe(false);
    const server = await startRedisServer({ port });
    try {
      await starting;
      const client = makeClient(server.url, namespace);
      expect(await (await client.enqueue('add', [3, 4])).result({ timeout: 20_000 })).toBe(7);
    } finally {
      await cleanup();
      await server.stop();
    }
  });

  it('a task module that does not load ends start() with PoolFailedError, even while the broker is unreachable', async () => {
    const port = await freePort();
    const worker = makeWorker({
      app: fixture('throws-on-import.mjs'),
      broker: `redis://127.0.0.1:${port}`,
      namespace: uniqueName('ns'),
      concurrency: 1,
      pool: { maxRestarts: 1, restartWindow: 60_000 },
    });
    await expect(worker.start()).rejects.toBeInstanceOf(PoolFailedError);
    expect(worker.pool.stats().processes.filter((p) => p.state !== 'exited')).toEqual([]);
  });

  it('while the broker is unreachable: one warning naming it, the retries at debug, a line when it answers', async () => {
    const port = await freePort();
    const namespace = uniqueName('ns');
    const { log, lines } = captureLog();
    const worker = makeWorker({ broker: `redis://127.0.0.1:${port}`, namespace, concurrency: 1, logger: log });
    const starting = worker.start();
    const retries = (): Record<string, unknown>[] => lines.filter((l) => String(l.msg).includes('retrying until'));
    await expect.poll(() => retries().length, { message: 'three attempts failed' }).toBeGreaterThanOrEqual(3);
    const server = await startRedisServer({ port });
    try {
      await starting;
      const loud = lines.filter((l) => (l.level as number) >= 40);
      expect(loud.map((l) => l.msg)).toEqual([expect.stringContaining(`127.0.0.1:${port}: connect ECONNREFUSED`)]);
      expect(
        retries()
          .slice(1)
          .every((l) => l.level === 20),
      ).toBe(true);
      expect(lines.some((l) => l.msg === 'connected to the broker')).toBe(true);
    } finally {
      await cleanup();
      await server.stop();
    }
  });

  it.each([
    ['a user or password Redis refuses', 'no-such-user:pw@', '', /refused the user or password in the URL: WRONGPASS/],
    ['a database Redis does not have', '', '/1000', /has no database 1000 .*ERR DB index is out of range/],
  ])('%s ends start() with BrokerRefusedError naming it, and stops what had started', async (_, auth, db, reason) => {
    const base = new URL(redisUrl());
    const worker = makeWorker({
      broker: `redis://${auth}${base.host}${db}`,
      namespace: uniqueName('ns'),
      concurrency: 1,
    });
    const err = await worker.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BrokerRefusedError);
    expect((err as Error).message).toMatch(reason);
    expect(worker.pool.stats().processes.filter((p) => p.state !== 'exited')).toEqual([]);
  });

  it('stop() before start(): start() rejects with WorkerStoppedError and spawns nothing', async () => {
    const worker = makeWorker({ broker: redisUrl(), namespace: uniqueName('ns'), concurrency: 1 });
    await worker.stop();
    await expect(worker.start()).rejects.toBeInstanceOf(WorkerStoppedError);
    expect(worker.pool.stats().processes).toEqual([]);
  });

  it('stop() while start() waits for the broker: start() rejects with WorkerStoppedError, no child is left', async () => {
    const port = await freePort();
    const worker = makeWorker({ broker: `redis://127.0.0.1:${port}`, namespace: uniqueName('ns'), concurrency: 1 });
    let ready = false;
    worker.on('ready', () => (ready = true));
    const starting = worker.start().then(
      () => 'resolved',
      (e: unknown) => e,
    );
    await expect
      .poll(() => worker.pool.stats().processes.filter((p) => p.state === 'idle').length, {
        message: 'the child loaded the task module',
      })
      .toBe(1);
    await worker.stop();
    const outcome = await starting;
    expect(outcome).toBeInstanceOf(WorkerStoppedError);
    expect(outcome).toMatchObject({ code: 'PREFORK_WORKER_STOPPED' });
    expect(ready).toBe(false);
    expect(worker.pool.stats().processes.filter((p) => p.state !== 'exited')).toEqual([]);
  });

  it('stop() while the children boot (the broker answers): start() rejects with WorkerStoppedError, the node leaves', async () => {
    const namespace = uniqueName('ns');
    // Children that take a while to load the task module: the node registers long before they are up.
    const worker = makeWorker({
      app: fixture('slow-import.mjs'),
      broker: redisUrl(),
      namespace,
      concurrency: 1,
      pool: { env: { PREFORK_TEST_IMPORT_MS: '1500' } },
    });
    const starting = worker.start().then(
      () => 'resolved',
      (e: unknown) => e,
    );
    const client = makeClient(redisUrl(), namespace);
    const admin = client.broker as unknown as { listNodes(): Promise<unknown[]> };
    await expect.poll(() => admin.listNodes().then((n) => n.length), { message: 'the node registered' }).toBe(1);
    await worker.stop();
    expect(await starting).toBeInstanceOf(WorkerStoppedError);
    expect(await admin.listNodes()).toEqual([]);
    expect(worker.pool.stats().processes.filter((p) => p.state !== 'exited')).toEqual([]);
  });
});
