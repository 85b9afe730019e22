import type { Redis, RedisOptions } from 'ioredis';
import { ioredis } from './ioredis-module.js';
import type { Logger } from 'pino';
import { BrokerOfflineError, BrokerRefusedError, BrokerUnavailableError, messageOf } from '../../errors.js';
import { maskUrl } from '../mask-url.js';
import { shedCommand } from './reply-errors.js';
import { scriptNameOf } from './scripts.js';
import { AnswerBound, failUnanswered } from './unanswered.js';

/** ioredis's own limit on the TCP connect. */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * The most open() waits for a connection to be ready: the TCP connect and
 * the handshake (AUTH, SELECT, the ready check). ioredis bounds only the
 * first, so a server that accepts and never answers (not Redis, a stopped
 * Redis) would otherwise hold a connect for ever.
 */
const OPEN_TIMEOUT_MS = 2 * CONNECT_TIMEOUT_MS;
/**
 * How long a socket we end waits for Redis to close its side before it is
 * destroyed (ioredis's disconnectTimeout, 2 s by default). A healthy Redis
 * closes at once; one that is frozen, or a peer gone silently (the watchdog's
 * case), never does, and every close and reconnect would wait the whole of it.
 */
const DISCONNECT_TIMEOUT_MS = 250;

/** Reconnect with backoff while Redis is away: 100 ms, 200 ms ... up to 2 s, for ever. */
function backoff(times: number): number {
  return Math.min(times * 100, 2_000);
}

const lastError = new WeakMap<Redis, Error>();
/** Connections in open()'s own attempt: a failure ends it (open() reports it) instead of starting a reconnect loop. */
const attempting = new WeakSet<Redis>();

export type ConnectionRole = 'command' | 'blocking';

/**
 * A connection for one role. Command connections fail a command after two
 * reconnect attempts (callers retry with their own backoff), and, given
 * `commandTimeoutMs`, one Redis leaves unanswered that long (AnswerBound).
 * Blocking connections never queue offline and never re-send a block after
 * a reconnect: the caller re-arms it, so no stale block reserves jobs that
 * no one reads; no bound cuts a block (a watchdog catches one that hangs).
 * Only a connection that has been ready reconnects by itself; until then
 * each attempt is open()'s, which reports its failure.
 */
export function createConnection(
  url: string,
  role: ConnectionRole,
  name: string,
  log: Logger,
  commandTimeoutMs?: number,
): Redis {
  const options: RedisOptions = {
    lazyConnect: true,
    enableAutoPipelining: false,
    connectTimeout: CONNECT_TIMEOUT_MS,
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
    retryStrategy: (times) => (attempting.has(redis) ? null : backoff(times)),
    connectionName: name,
    ...(role === 'command'
      ? { maxRetriesPerRequest: 2 }
      : { maxRetriesPerRequest: null, enableOfflineQueue: false, autoResendUnfulfilledCommands: false }),
  };
  const redis = new (ioredis().Redis)(url, options);
  let wasReady = false;
  const bound =
    role === 'command' && commandTimeoutMs !== undefined
      ? new AnswerBound(redis, maskUrl(url), commandTimeoutMs)
      : undefined;
  wrapCommands(redis, maskUrl(url), bound);
  let down = false;
  redis.on('error', (err: Error) => {
    // A wrong password's WRONGPASS is followed by the NOAUTH of the SELECT sent behind it: the first is why.
    if (!(noAuth(err) && passwordRefused(lastError.get(redis)))) lastError.set(redis, err);
    // ioredis reports a refused SELECT and goes on to be ready in database 0: end this attempt before it is.
    if (selectRefused(err)) redis.disconnect(true);
    // A handshake command (SELECT) cut short by our own disconnect() is reported as an error too: not an outage.
    if (closingOnPurpose(redis)) {
      log.debug({ err: messageOf(err), connection: name }, 'redis connection error while closing');
      return;
    }
    // Not an outage yet: open() fails with it, and its caller says so (a retrying one, once).
    if (!wasReady) {
      log.debug({ err: messageOf(err), connection: name }, 'redis connection attempt failed');
      return;
    }
    // One line per outage, not one per reconnect attempt.
    if (!down) log.warn({ err: messageOf(err), connection: name }, 'redis connection lost; reconnecting');
    down = true;
  });
  redis.on('ready', () => {
    wasReady = true;
    if (down) log.info({ connection: name }, 'redis connection back');
    down = false;
  });
  if (role === 'command') redis.on('close', () => failUnanswered(redis, maskUrl(url)));
  return redis;
}

/**
 * Every command sent on `redis` (alone, in a pipeline or a MULTI: they all
 * go through its sendCommand) rejects with an error whose attached command
 * is cut down (shedCommand): ioredis attaches the whole command, and a
 * script's first call on a connection carries its source. One that waited
 * offline until ioredis gave up on it rejects with BrokerOfflineError rather
 * than ioredis's "max retries per request" text (notSent). With `bound`,
 * each command is timed too: one wrapper for all, as it runs for every
 * command.
 */
function wrapCommands(redis: Redis, displayUrl: string, bound: AnswerBound | undefined): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, ...rest) => {
    const reject = command.reject;
    command.reject = (err: Error) => {
      shedCommand(err, scriptNameOf);
      reject.call(command, notSent(redis, displayUrl, err));
    };
    bound?.watch(command);
    return send(command, ...rest);
  };
}

/**
 * ioredis's error for the commands it held offline while reconnecting, once
 * the connection's reconnect attempts (maxRetriesPerRequest) ran out:
 * BrokerOfflineError, naming why the connection is down. These commands
 * never left the process (those sent and unanswered when the connection
 * closed were failed first: failUnanswered), so nothing of them was applied.
 */
function notSent(redis: Redis, displayUrl: string, err: Error): Error {
  if (err.name !== 'MaxRetriesPerRequestError') return err;
  const why = lastError.get(redis);
  const detail = `the connection is down${why === undefined ? '' : ` (${messageOf(why)})`} and did not come back in time`;
  return new BrokerOfflineError(displayUrl, detail, { cause: err });
}

/**
 * True between our disconnect() (or QUIT) and the close it causes. ioredis
 * keeps this flag to mute some errors of a closing connection itself, but
 * not the "Stream isn't writeable" of a handshake command sent after it.
 */
function closingOnPurpose(redis: Redis): boolean {
  return (redis as unknown as { manuallyClosing?: unknown }).manuallyClosing === true;
}

/** The command a Redis error reply answered (ioredis attaches it). */
function repliedTo(err: Error): { name?: unknown; args?: unknown } | undefined {
  if (err.name !== 'ReplyError') return undefined;
  return (err as { command?: { name?: unknown; args?: unknown } }).command;
}

function selectRefused(err: Error): boolean {
  return repliedTo(err)?.name === 'select';
}

/** Redis wants AUTH before this command (the first one, a SELECT when the URL names a database). */
function noAuth(err: Error): boolean {
  return err.name === 'ReplyError' && err.message.startsWith('NOAUTH');
}

function passwordRefused(err: Error | undefined): boolean {
  return err?.name === 'ReplyError' && /^(WRONGPASS|ERR invalid password)/.test(err.message);
}

/**
 * What a refusal of the handshake means, or undefined for anything else. A
 * wrong or missing password, a user without the rights, a database Redis
 * does not have, a server that is not Redis: none heals by retrying.
 */
function refusal(err: Error): string | undefined {
  // Bytes that are not RESP (an HTTP server, a TLS port): ioredis's "Please report this." would send users to it.
  if (err.name === 'ParserError')
    return `the server at that address does not speak the Redis protocol (another service, or a TLS port: rediss://): ${err.message.replace(/ Please report this\.$/, '')}`;
  if (err.name !== 'ReplyError') return undefined;
  // Before the SELECT case: a SELECT refused with NOAUTH is a password missing, not a database.
  if (noAuth(err)) return `Redis requires a password and the URL gives none: ${err.message}`;
  if (passwordRefused(err)) return `Redis refused the user or password in the URL: ${err.message}`;
  if (err.message.startsWith('NOPERM'))
    return `the URL's Redis user lacks the rights for a command prefork needs: ${err.message}`;
  const command = repliedTo(err);
  if (command?.name === 'select') {
    const db = Array.isArray(command.args) ? String(command.args[0]) : '?';
    return `Redis has no database ${db} (the number at the end of the URL): ${err.message}`;
  }
  return undefined;
}

/** open()'s own deadline passed: names what did not answer. */
class OpenTimeout extends Error {}

/**
 * Connects or rejects, never hangs: within OPEN_TIMEOUT_MS, with
 * BrokerUnavailableError (unreachable, or no answer), or BrokerRefusedError
 * when Redis refuses the handshake (a wrong or missing password, a database
 * it does not have). A connection that never was ready (or ended) gets one
 * attempt, and no reconnect loop is left behind when it fails. One that was
 * ready reconnects by itself: open() waits for it, and its owner keeps it
 * (close() ends it); `signal` (the broker's close) ends that wait.
 */
export async function open(redis: Redis, displayUrl: string, signal?: AbortSignal): Promise<void> {
  if (redis.status === 'ready') return;
  if (redis.status === 'wait' || redis.status === 'end') {
    try {
      await connectOnce(redis);
    } catch (err) {
      redis.disconnect();
      throw openError(redis, displayUrl, err instanceof OpenTimeout ? err : (lastError.get(redis) ?? err));
    }
    return;
  }
  try {
    await waitReady(redis, OPEN_TIMEOUT_MS, signal);
  } catch (err) {
    // An attempt that hangs (a handshake a frozen Redis never answers) is cut, so that the loop starts a fresh one.
    if (redis.status === 'connect' || redis.status === 'connecting') redis.disconnect(true);
    throw openError(redis, displayUrl, lastError.get(redis) ?? err);
  }
}

/** A refusal that retrying will not mend, or else the broker being unavailable; `cause` as Redis (or the timer) said it. */
function openError(redis: Redis, displayUrl: string, cause: unknown): Error {
  const refused = cause instanceof Error ? refusal(cause) : undefined;
  if (refused !== undefined)
    return new BrokerRefusedError(`the broker at ${displayUrl} refused the connection: ${refused}`, { cause });
  return new BrokerUnavailableError(displayUrl, `${messageOf(cause)}${tlsHint(redis, cause)}`, { cause });
}

/**
 * ioredis's connect timeout covers a rediss:// URL's TLS handshake, which a
 * plain Redis port never answers (it waits for a command): its bare
 * "connect ETIMEDOUT" would send users looking for a firewall.
 */
function tlsHint(redis: Redis, cause: unknown): string {
  if (redis.options.tls === undefined || (cause as { code?: unknown } | undefined)?.code !== 'ETIMEDOUT') return '';
  return ` (no TLS session within ${CONNECT_TIMEOUT_MS} ms: the host does not answer, or that port does not serve TLS; a plain Redis port takes redis://)`;
}

/** One connect attempt, bounded by OPEN_TIMEOUT_MS; a failure ends it (no reconnect loop). */
async function connectOnce(redis: Redis): Promise<void> {
  lastError.delete(redis);
  attempting.add(redis);
  let timer: NodeJS.Timeout | undefined;
  const connecting = redis.connect();
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OpenTimeout(notAnswered(redis))), OPEN_TIMEOUT_MS);
    timer.unref();
  });
  try {
    await Promise.race([connecting, late]);
  } finally {
    clearTimeout(timer);
    attempting.delete(redis);
    // Given up on: its rejection (when the disconnect lands) is not news.
    connecting.catch(() => undefined);
  }
}

function notAnswered(redis: Redis): string {
  const ms = OPEN_TIMEOUT_MS;
  if (redis.status === 'connect')
    return `the server accepted the connection but did not answer within ${ms} ms (not Redis, or a Redis that is stopped or overloaded)`;
  return `not connected within ${ms} ms (status ${redis.status})`;
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

/**
 * How long a closing connection waits for Redis to say anything before it
 * closes the socket instead of waiting for its QUIT's reply. Redis answers a
 * QUIT at once, or after the commands sent before it: each reply of theirs
 * restarts the wait, so a long pipeline still finishes.
 */
export const QUIT_SILENCE_MS = 1_000;

/**
 * Ends a connection with QUIT, or closes the socket once Redis has been
 * silent for `silenceMs`. A Redis that stopped answering (SIGSTOP, CLIENT
 * PAUSE) would otherwise hold the close until the connection's bound ran
 * out, or for ever on a connection without one. Commands still unanswered
 * then fail with BrokerUnavailableError, saying they may or may not have
 * been applied (failUnanswered; ioredis would fail them with a bare
 * "Connection is closed.").
 */
export function quit(redis: Redis, displayUrl: string, silenceMs = QUIT_SILENCE_MS): Promise<void> {
  // Not connected (reconnecting, never opened): nothing to say goodbye on.
  if (redis.status !== 'ready') {
    redis.disconnect();
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    let heardAt = performance.now();
    const onData = (): void => {
      heardAt = performance.now();
    };
    const stream = redis.stream;
    stream.on('data', onData);
    let timer: NodeJS.Timeout | undefined;
    const check = (): void => {
      const silent = performance.now() - heardAt;
      if (silent < silenceMs) {
        timer = setTimeout(check, silenceMs - silent);
        return;
      }
      failUnanswered(redis, displayUrl);
      redis.disconnect();
    };
    timer = setTimeout(check, silenceMs);
    const done = (): void => {
      clearTimeout(timer);
      stream.off('data', onData);
      redis.off('end', done);
      resolve();
    };
    redis.once('end', done);
    redis.quit().then(done, () => {
      redis.disconnect();
      done();
    });
  });
}
