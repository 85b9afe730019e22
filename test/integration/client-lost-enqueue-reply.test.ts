/**
 * An enqueue whose reply is lost with the connection: Redis ran it, the
 * Client never heard. ioredis would send it again once it reconnects, and
 * the jobs would be added twice (and run twice, no node dying). The Client
 * instead rejects with BrokerUnavailableError saying so, and nothing is sent
 * again. The Client talks to the test Redis through a TCP proxy.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerUnavailableError, Client } from 'prefork';
import { createConnection } from '../../dist/broker/redis/connection.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitUntil } from '../helpers/wait.js';
import { log, redisUrl } from './redis-helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('an enqueue whose reply is lost', () => {
  it('rejects saying the jobs may be queued, and is not sent again', async () => {
    const namespace = `lost-enqueue-${randomUUID()}`;
    const raw = new Redis(redisUrl());
    cleanups.push(async () => {
      const keys = await raw.keys(`{${namespace}}*`);
      if (keys.length > 0) await raw.del(...keys);
      raw.disconnect();
    });
    const proxy = await TcpProxy.start(redisUrl());
    cleanups.push(() => proxy.close());
    const client = new Client({ broker: proxy.url, namespace, logger: log });
    cleanups.push(() => client.close());
    const stream = `{${namespace}}:q:default`;
    await client.enqueue('add', [0, 0], { ignoreResult: true });
    expect(await raw.xlen(stream)).toBe(1);

    proxy.holdReplies();
    const lost = client.enqueueMany([
      { name: 'add', args: [1, 1], options: { ignoreResult: true } },
      { name: 'add', args: [2, 2], options: { ignoreResult: true } },
    ]);
    lost.catch(() => undefined);
    // Redis ran it; its reply waits in the proxy, and goes with the connection.
    await waitUntil(async () => (await raw.xlen(stream)) === 3, 'the enqueue ran in Redis');
    proxy.dropAll();
    proxy.releaseReplies();

    const err = await lost.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect((err as Error).message).toMatch(
      /closed before Redis answered: what was sent may or may not have been applied/,
    );
    // The client works again, and the lost enqueue was not sent a second time.
    await client.enqueue('add', [3, 3], { ignoreResult: true });
    expect(await raw.xlen(stream)).toBe(4);
  });

  it('a command nobody awaits, cut the same way, is no unhandled rejection', async () => {
    const key = `lost-unawaited-${randomUUID()}`;
    const raw = new Redis(redisUrl());
    const proxy = await TcpProxy.start(redisUrl());
    const conn = createConnection(proxy.url, 'command', 'prefork:commands', log);
    cleanups.push(async () => {
      conn.disconnect();
      await proxy.close();
      await raw.del(key);
      raw.disconnect();
    });
    await conn.connect();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    cleanups.push(() => Promise.resolve(void process.off('unhandledRejection', onUnhandled)));
    proxy.holdReplies();
    // Sent and never awaited: as a fire-and-forget write is.
    void conn.set(key, '1');
    await waitUntil(async () => (await raw.get(key)) === '1', 'Redis ran it');
    const closed = new Promise((resolve) => conn.once('close', resolve));
    proxy.dropAll();
    proxy.releaseReplies();
    await closed;
    // Node reports an unhandled rejection once the microtasks of the turn that made it ran: a turn later.
    for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  });
});
