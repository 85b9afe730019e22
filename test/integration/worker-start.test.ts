/**
 * How a Worker starts: its children boot while the broker connects (the
 * slowest steps of a start overlap), so a broker that is not there yet holds
 * up nothing but the node's registration, and a task module that does not
 * load ends start() even then.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PoolFailedError } from 'prefork';
import { freePort, startRedisServer } from '../../scripts/redis.mjs';
import { cleanup, fixture, makeClient, makeWorker, uniqueName } from '../helpers/worker.js';

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
});
