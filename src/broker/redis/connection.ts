import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { BrokerUnavailableError, messageOf, OptionError } from '../../errors.js';

const CONNECT_TIMEOUT_MS = 5_000;

/** The URL with any password masked: `redis://user:***@host:port/db`. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
  }
}

const EXPECTED_URL = 'redis://[user:password@]host:port[/db] or rediss://...';
const EXPECTED_DB = `${EXPECTED_URL}, the db a whole number >= 0`;

export function checkUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OptionError('broker', maskUrl(url), EXPECTED_URL);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new OptionError('broker', maskUrl(url), EXPECTED_URL);
  // ioredis reads the db with parseInt: "/abc" became SELECT NaN (an uncaught error), "/2x" or "/2/3" database 2.
  const path = parsed.pathname === '/' ? '' : parsed.pathname.slice(1);
  const query = parsed.searchParams.get('db');
  for (const db of [path, query ?? ''])
    if (db !== '' && !isDbIndex(db)) throw new OptionError('broker', maskUrl(url), EXPECTED_DB);
}

function isDbIndex(text: string): boolean {
  return /^\d+$/.test(text) && Number.isSafeInteger(Number(text));
}

/** Reconnect with backoff while Redis is away: 100 ms, 200 ms ... up to 2 s, for ever. */
function retryStrategy(times: number): number {
  return Math.min(times * 100, 2_000);
}

const lastError = new WeakMap<Redis, string>();

export type ConnectionRole = 'command' | 'blocking';

/**
 * A connection for one role. Command connections fail a command after two
 * reconnect attempts (callers retry with their own backoff). Blocking
 * connections never queue offline and never re-send a block after a
 * reconnect: the caller re-arms it, so no stale block reserves jobs that no
 * one reads.
 */
export function createConnection(url: string, role: ConnectionRole, name: string, log: Logger): Redis {
  const options: RedisOptions = {
    lazyConnect: true,
    enableAutoPipelining: false,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy,
    connectionName: name,
    ...(role === 'command'
      ? { maxRetriesPerRequest: 2 }
      : { maxRetriesPerRequest: null, enableOfflineQueue: false, autoResendUnfulfilledCommands: false }),
  };
  const redis = new Redis(url, options);
  let down = false;
  redis.on('error', (err: Error) => {
    lastError.set(redis, err.message);
    // A handshake command (SELECT) cut short by our own disconnect() is reported as an error too: not an outage.
    if (closingOnPurpose(redis)) {
      log.debug({ err: messageOf(err), connection: name }, 'redis connection error while closing');
      return;
    }
    // One line per outage, not one per reconnect attempt.
    if (!down) log.warn({ err: messageOf(err), connection: name }, 'redis connection lost; reconnecting');
    down = true;
  });
  redis.on('ready', () => {
    if (down) log.info({ connection: name }, 'redis connection back');
    down = false;
  });
  return redis;
}

/**
 * True between our disconnect() (or QUIT) and the close it causes. ioredis
 * keeps this flag to mute some errors of a closing connection itself, but
 * not the "Stream isn't writeable" of a handshake command sent after it.
 */
function closingOnPurpose(redis: Redis): boolean {
  return (redis as unknown as { manuallyClosing?: unknown }).manuallyClosing === true;
}

/**
 * Connects or rejects with BrokerUnavailableError (and stops the reconnect
 * loop), never hangs; `signal` (the broker's close) ends the wait for a
 * connection that is reconnecting.
 */
export async function open(redis: Redis, displayUrl: string, signal?: AbortSignal): Promise<void> {
  if (redis.status === 'ready') return;
  try {
    if (redis.status === 'wait' || redis.status === 'end') await redis.connect();
    else await waitReady(redis, CONNECT_TIMEOUT_MS * 2, signal);
  } catch (err) {
    redis.disconnect();
    throw new BrokerUnavailableError(displayUrl, describeError(err, redis), { cause: err });
  }
}

function describeError(err: unknown, redis: Redis): string {
  return lastError.get(redis) ?? messageOf(err);
}

/**
 * Resolves when the connection is ready; rejects after `ms`, when it ends,
 * or when `signal` aborts (a disconnect() while it waits to reconnect emits
 * nothing, so a closing owner must say so).
 */
export function waitReady(redis: Redis, ms: number, signal?: AbortSignal): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  if (redis.status === 'end' || signal?.aborted === true) return Promise.reject(new Error('the connection was closed'));
  return new Promise((resolve, reject) => {
    const done = (err?: Error): void => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('end', onEnd);
      signal?.removeEventListener('abort', onEnd);
      if (err === undefined) resolve();
      else reject(err);
    };
    const timer = setTimeout(() => done(new Error(`not ready within ${ms} ms (status ${redis.status})`)), ms);
    timer.unref();
    const onReady = (): void => done();
    const onEnd = (): void => done(new Error('the connection was closed'));
    redis.once('ready', onReady);
    redis.once('end', onEnd);
    signal?.addEventListener('abort', onEnd, { once: true });
  });
}
