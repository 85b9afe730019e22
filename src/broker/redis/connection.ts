import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { BrokerUnavailableError, messageOf, OptionError } from '../../errors.js';
import { shedCommand } from './reply-errors.js';
import { scriptNameOf } from './scripts.js';

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

export function checkUrl(url: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new OptionError('broker', maskUrl(url), EXPECTED_URL);
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') throw new OptionError('broker', maskUrl(url), EXPECTED_URL);
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
  shedCommandsOfErrors(redis);
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
 * Every command sent on `redis` (alone, in a pipeline or a MULTI: they all
 * go through its sendCommand) rejects with an error whose attached command
 * is cut down (shedCommand): ioredis attaches the whole command, and a
 * script's first call on a connection carries its source.
 */
function shedCommandsOfErrors(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, ...rest) => {
    const reject = command.reject;
    command.reject = (err: Error) => {
      shedCommand(err, scriptNameOf);
      reject.call(command, err);
    };
    return send(command, ...rest);
  };
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
