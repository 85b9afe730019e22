/**
 * The connections' error reporting: an outage is one warning; an error
 * ioredis reports while we close the connection on purpose (a handshake
 * SELECT sent into a socket our disconnect() had ended, seen under load as
 * "Stream isn't writeable and enableOfflineQueue options is false") is not
 * an outage, and says nothing above debug. And what open() does with a
 * connection that cannot be opened: it never hangs, names why, and tells a
 * refusal that will not heal (a password, a database) from an outage.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createConnection, open } from '../../dist/broker/redis/connection.js';
import { BrokerRefusedError, BrokerUnavailableError } from '../../dist/errors.js';
import { freePort, startRedisServer } from '../../scripts/redis.mjs';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { captureLog } from '../helpers/worker.js';
import { log, redisUrl } from './redis-helpers.js';

const HANDSHAKE_CUT = "Stream isn't writeable and enableOfflineQueue options is false";
const warnings = (lines: Record<string, unknown>[]): unknown[] =>
  lines.filter((l) => (l.level as number) >= 40).map((l) => l.msg);

/** What open() rejected with (it must reject). */
async function openFailure(redis: Redis, url: string, signal?: AbortSignal): Promise<Error> {
  return open(redis, url, signal).then(
    () => {
      throw new Error('open() resolved');
    },
    (err: unknown) => err as Error,
  );
}

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A connection closed after the test, counting the times it became ready. */
function connection(url: string, role: 'command' | 'blocking' = 'command'): { redis: Redis; readies: () => number } {
  const redis = createConnection(url, role, 'prefork:test', log);
  let readies = 0;
  redis.on('ready', () => readies++);
  closers.push(() => redis.disconnect());
  return { redis, readies: () => readies };
}

describe('Redis connections: errors while closing on purpose', () => {
  it('an error after our own disconnect() is logged at debug, not as a lost connection', async () => {
    const { log, lines } = captureLog();
    const redis = createConnection(redisUrl(), 'blocking', 'prefork:test', log);
    await redis.connect();
    redis.disconnect();
    // What ioredis emits when its handshake SELECT meets the socket disconnect() ended.
    redis.emit('error', new Error(HANDSHAKE_CUT));
    expect(warnings(lines)).toEqual([]);
    expect(lines.some((l) => l.msg === 'redis connection error while closing' && l.err === HANDSHAKE_CUT)).toBe(true);
  });

  it('the same error on an open connection is an outage: one warning', async () => {
    const { log, lines } = captureLog();
    const redis = createConnection(redisUrl(), 'blocking', 'prefork:test', log);
    await redis.connect();
    redis.emit('error', new Error(HANDSHAKE_CUT));
    redis.emit('error', new Error(HANDSHAKE_CUT));
    redis.disconnect();
    expect(warnings(lines)).toEqual(['redis connection lost; reconnecting']);
  });
});

describe('open(): a server that accepts the connection and never answers', () => {
  it('rejects with BrokerUnavailableError naming the URL and what did not answer, and leaves no socket open', async () => {
    // Not Redis, or a stopped one: the kernel accepts, nothing replies.
    const held = new Set<Socket>();
    const server: Server = createServer((socket) => {
      held.add(socket);
      socket.resume(); // reads (and drops) what comes, so the client's end is seen
      socket.on('close', () => held.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    closers.push(() => held.forEach((socket) => socket.destroy()));
    const { port } = server.address() as { port: number };
    const url = `redis://someone:s3cret@127.0.0.1:${port}`;
    const { redis, readies } = connection(url);
    const err = await openFailure(redis, 'redis://someone:***@127.0.0.1:' + port);
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect(err.message).toContain(`redis://someone:***@127.0.0.1:${port}`);
    expect(err.message).not.toContain('s3cret');
    expect(err.message).toMatch(/accepted the connection but did not answer within \d+ ms/);
    expect(readies()).toBe(0);
    await expect.poll(() => held.size).toBe(0);
  });
});

describe("open(): a server that answers, but not in Redis's protocol", () => {
  it('rejects with BrokerRefusedError (retrying cannot mend it) saying so, without "Please report this."', async () => {
    // An HTTP server at the URL's port: its first reply byte is "H", no RESP type.
    const server: Server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as { port: number };
    const { redis, readies } = connection(`redis://127.0.0.1:${port}`);
    const err = await openFailure(redis, 'the-url');
    expect(err).toBeInstanceOf(BrokerRefusedError);
    expect(err.message).toContain('the broker at the-url refused the connection');
    expect(err.message).toContain('does not speak the Redis protocol');
    expect(err.message).toContain('Protocol error, got "H" as reply type byte');
    expect(err.message).not.toContain('Please report this');
    expect(readies()).toBe(0);
  });
});

describe('open(): Redis refuses the connection itself', () => {
  it('a database Redis does not have: BrokerRefusedError naming it and the reply; never ready, so nothing lands in database 0', async () => {
    const { redis, readies } = connection(`${redisUrl()}/1000`);
    const err = await openFailure(redis, 'the-url');
    expect(err).toBeInstanceOf(BrokerRefusedError);
    expect(err.message).toContain('the broker at the-url refused the connection');
    expect(err.message).toContain('database 1000');
    expect(err.message).toContain('ERR DB index is out of range');
    expect(readies()).toBe(0);
    await expect.poll(() => redis.status).toBe('end');
  });

  it('a user or password Redis does not accept: BrokerRefusedError naming WRONGPASS', async () => {
    const base = new URL(redisUrl());
    const { redis } = connection(`redis://no-such-user:pw@${base.host}`);
    const err = await openFailure(redis, 'the-url');
    expect(err).toBeInstanceOf(BrokerRefusedError);
    expect(err.message).toMatch(/refused the user or password in the URL: WRONGPASS/);
    await expect.poll(() => redis.status).toBe('end');
  });

  it('a Redis that requires a password, and a URL without one: BrokerRefusedError naming NOAUTH', async () => {
    const server = await startRedisServer();
    closers.push(() => server.stop());
    const admin = new Redis(server.url);
    await admin.config('SET', 'requirepass', 'the-password');
    admin.disconnect();
    const { redis } = connection(server.url);
    const err = await openFailure(redis, 'the-url');
    expect(err).toBeInstanceOf(BrokerRefusedError);
    expect(err.message).toMatch(/requires a password and the URL gives none: NOAUTH/);
  });

  // With a database in the URL, ioredis's first command is SELECT, which Redis refuses with NOAUTH:
  // not "Redis has no database 2", the password is what is wrong.
  it.each([
    ['no password in the URL', '', /requires a password and the URL gives none: NOAUTH/],
    ['a wrong password in the URL', ':not-it@', /refused the user or password in the URL: WRONGPASS/],
  ])(
    'a Redis that requires a password, %s, a database given: names the password, not the database',
    async (_, auth, why) => {
      const server = await startRedisServer();
      closers.push(() => server.stop());
      const admin = new Redis(server.url);
      await admin.config('SET', 'requirepass', 'the-password');
      admin.disconnect();
      const { redis } = connection(`redis://${auth}${new URL(server.url).host}/2`);
      const err = await openFailure(redis, 'the-url');
      expect(err).toBeInstanceOf(BrokerRefusedError);
      expect(err.message).toMatch(why);
      expect(err.message).not.toContain('database');
    },
  );
});

describe('open(): rediss:// to a port that does not serve TLS', () => {
  it('fails naming TLS and redis://, not a bare "connect ETIMEDOUT"', async () => {
    const { redis, readies } = connection(redisUrl().replace(/^redis:/, 'rediss:'));
    const err = await openFailure(redis, 'the-url');
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect(err.message).toContain('TLS');
    expect(err.message).toContain('redis://');
    expect(readies()).toBe(0);
  });
});

describe('open(): a connection that cannot connect', () => {
  it("is not an outage: the failure is open()'s to report, and logs nothing above debug", async () => {
    const { log: captured, lines } = captureLog();
    const url = `redis://127.0.0.1:${await freePort()}`;
    const redis = createConnection(url, 'blocking', 'prefork:test', captured);
    closers.push(() => redis.disconnect());
    const err = await openFailure(redis, url);
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect(err.message).toContain('ECONNREFUSED');
    expect(warnings(lines)).toEqual([]);
    expect(lines.some((l) => l.msg === 'redis connection attempt failed')).toBe(true);
    // One attempt, no reconnect loop behind it.
    await expect.poll(() => redis.status).toBe('end');
  });

  it('that was ready keeps reconnecting after an open() gave up waiting for it, and opens once Redis is back', async () => {
    const proxy = await TcpProxy.start(redisUrl());
    closers.push(() => proxy.close());
    const { redis } = connection(proxy.url, 'blocking');
    await open(redis, proxy.url);
    proxy.setMode('refuse');
    proxy.dropAll();
    await vi.waitFor(() => expect(redis.status).toBe('reconnecting'));
    // A wait for the reconnect cut short (here by its signal; else after its time): its owner keeps the connection.
    const stop = new AbortController();
    const waiting = openFailure(redis, proxy.url, stop.signal);
    stop.abort();
    expect(await waiting).toBeInstanceOf(BrokerUnavailableError);
    proxy.setMode('forward');
    await open(redis, proxy.url);
    expect(redis.status).toBe('ready');
    expect(await redis.ping()).toBe('PONG');
  });
});
