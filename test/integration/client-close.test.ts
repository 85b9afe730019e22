/**
 * Client.close() (and a Redis broker's close()) called more than once (a
 * shutdown hook and a `finally` both closing): every call resolves only
 * once the first is done, its connections to Redis ended, so a caller that
 * awaits any of them can exit at once. A wait held up by the client's
 * connect fails as any wait at close() does. Each test has a redis-server of its own, so that the
 * connections it lists are this client's.
 */
import { describe, expect, it } from 'vitest';
import { BrokerClosedError, Client, ClientClosedError } from 'prefork';
import { createBroker } from 'prefork/broker';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitUntil } from '../helpers/wait.js';
import { makeClient, silent, uniqueName } from '../helpers/worker.js';

const own = ownRedisPerTest();

/** The names of the prefork connections Redis has now. */
async function preforkConnections(): Promise<string[]> {
  const list = (await own.raw.client('LIST')) as string;
  return [...list.matchAll(/ name=(prefork:\S*)/g)].map((m) => m[1] as string);
}

describe('Client.close() called again', () => {
  it('while the first close runs: the second resolves only once the first is done', async () => {
    const client = makeClient(own.server.url, uniqueName('ns'));
    const job = await client.enqueue('add', [1, 2]);
    const waiting = job.result().catch((e: unknown) => e);
    await waitUntil(async () => (await preforkConnections()).includes('prefork:result-wait'), 'the client waits');
    let firstDone = false;
    const first = client.close().then(() => (firstDone = true));
    await client.close();
    // The first close's work is done: its QUIT answered, Redis dropped that connection.
    expect(firstDone).toBe(true);
    expect(await preforkConnections()).not.toContain('prefork:commands');
    await first;
    expect(await waiting).toBeInstanceOf(ClientClosedError);
  });
});

describe('Client.close() while the client connects', () => {
  it('rejects a result() waiting for the connection with ClientClosedError, as any wait at close()', async () => {
    const proxy = await TcpProxy.start(own.server.url);
    try {
      // Accepted and never answered: the client's first connect waits (up to its 10 s bound).
      proxy.setMode('hold');
      const client = makeClient(proxy.url, uniqueName('ns'));
      const waiting = client
        .handle('job-1')
        .result()
        .catch((e: unknown) => e);
      await waitUntil(() => proxy.accepted > 0, 'the client connects');
      await client.close();
      const err = await waiting;
      expect(err).toBeInstanceOf(ClientClosedError);
      expect((err as Error).message).toContain('job-1');
    } finally {
      await proxy.close();
    }
  });
});

describe('A Redis broker object closed again', () => {
  it('while the first close runs: the second resolves only once the first is done', async () => {
    const broker = createBroker(own.server.url, { namespace: uniqueName('ns'), logger: silent });
    await broker.connect();
    await broker.getResult('job-1');
    let firstDone = false;
    const first = broker.close().then(() => (firstDone = true));
    await broker.close();
    expect(firstDone).toBe(true);
    expect(await preforkConnections()).not.toContain('prefork:commands');
    await first;
  });
});

describe.each(['redis', 'memory'] as const)('A Client whose broker object (%s) its owner closes', (kind) => {
  it('fails the waits pending with BrokerClosedError instead of retrying for ever, and later waits too', async () => {
    const url = kind === 'redis' ? own.server.url : `memory://${uniqueName('closed-under')}`;
    const broker = createBroker(url, { namespace: uniqueName('ns'), logger: silent });
    await broker.connect();
    const client = new Client({ broker, logger: silent });
    try {
      const job = await client.enqueue('add', [1, 2]);
      const waiting = job.result().catch((e: unknown) => e);
      // Blocked on its reply list when the broker closes.
      if (kind === 'redis')
        await waitUntil(async () => (await preforkConnections()).includes('prefork:result-wait'), 'the client waits');
      await broker.close();
      expect(await waiting).toBeInstanceOf(BrokerClosedError);
      await expect(job.result()).rejects.toBeInstanceOf(BrokerClosedError);
    } finally {
      await client.close();
    }
  });
});
