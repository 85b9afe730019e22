/**
 * What many waits begun together cost Redis, counted in INFO commandstats on
 * a redis-server of this file's own (the shared one counts every test's
 * commands): their looks at the stored results go out together, a few
 * MGETs per turn of the event loop, not a GET per wait.
 */
import { describe, expect, it } from 'vitest';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { makeClient, makeWorker, uniqueName } from '../helpers/worker.js';

const own = ownRedisPerTest();

async function calls(name: string): Promise<number> {
  const text = await own.raw.info('commandstats');
  return Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(text)?.[1] ?? 0);
}

describe('many waits begun together', () => {
  it('read the stored results in a few MGETs, not a GET each, and each gets its own result', async () => {
    const namespace = uniqueName('ns');
    const producer = makeClient(own.server.url, namespace);
    const enqueued = await producer.enqueueMany(Array.from({ length: 300 }, (_, i) => ({ name: 'add', args: [i, 1] })));
    // Handles of another client (no announcement to them): each wait looks, then polls.
    const waiter = makeClient(own.server.url, namespace);
    await waiter.getResult('connects-the-client'); // counted before the baseline below
    const [gets, mgets] = [await calls('get'), await calls('mget')];
    const results = Promise.all(enqueued.map((h) => waiter.handle(h.id).result({ timeout: 60_000 })));
    await expect.poll(async () => (await calls('mget')) > mgets).toBe(true);
    expect((await calls('get')) - gets).toBe(0);
    expect((await calls('mget')) - mgets).toBeLessThan(10);

    const worker = makeWorker({ broker: own.server.url, namespace });
    await worker.start();
    expect(await results).toEqual(enqueued.map((_, i) => i + 1));
  });
});

describe('a wait begun together with one whose stored result does not decode', () => {
  it('still gets its own result; only the other fails', async () => {
    const namespace = uniqueName('ns');
    const producer = makeClient(own.server.url, namespace);
    const handle = await producer.enqueue('add', [1, 2]);
    const worker = makeWorker({ broker: own.server.url, namespace });
    await worker.start();
    expect(await handle.result({ timeout: 30_000 })).toBe(3);
    // Bytes that are no msgpack record (another program's, or cut short).
    await own.raw.set(`${namespace}:res:unreadable`, 'not msgpack');

    const waiter = makeClient(own.server.url, namespace);
    await waiter.getResult('connects-the-client');
    // Begun in the same turn: their first looks share one read.
    const [unreadable, readable] = await Promise.allSettled([
      waiter.handle('unreadable').result({ timeout: 3_000 }),
      waiter.handle(handle.id).result({ timeout: 3_000 }),
    ]);
    expect(readable).toEqual({ status: 'fulfilled', value: 3 });
    expect(unreadable.status).toBe('rejected');
  });
});
