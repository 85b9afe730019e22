import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { BrokerClosedError, messageOf } from '../../errors.js';
import { createConnection, open, waitReady } from './connection.js';

/**
 * A blocking read never asks Redis for longer than this. Long, because an
 * idle node re-arms its block at this pace (Redis commands cost); bounded,
 * because a block on a connection that died silently (half-open socket, a
 * load balancer dropping idle flows — 4 min and more in common clouds) is
 * only noticed by the watchdog, this long plus its grace after it began.
 */
export const MAX_BLOCK_MS = 120_000;
/** A block that outlives its timeout by this much is presumed stuck (half-open socket): reconnect. */
const WATCHDOG_GRACE_MS = 3_000;
const UNBLOCK_RETRY_MS = 25;

/** Issues one blocking command for at most `blockMs` on `conn`; resolves null on timeout. */
export type BlockingCall<T> = (conn: Redis, blockMs: number) => Promise<T | null>;

type Outcome<T> = { kind: 'reply'; value: T | null } | { kind: 'lost' } | { kind: 'error'; err: unknown };

/**
 * A dedicated connection for blocking reads (XREADGROUP BLOCK, BLMPOP).
 * - timeouts are capped at MAX_BLOCK_MS and re-armed until the caller's deadline;
 * - a watchdog reconnects a block that outlives its timeout;
 * - when the connection drops (Redis restarted), the block is re-armed once it is back;
 * - an AbortSignal ends the block with CLIENT UNBLOCK sent on another
 *   connection: Redis returns at once, and entries it had already handed to
 *   the block still reach the caller (nothing is reserved and then dropped).
 */
export class BlockingConnection {
  private conn: Redis | undefined;
  private clientId: number | undefined;
  private connectedBefore = false;
  /** Settles once a new connection is fit for blocks: its id read, the one it replaces killed. */
  private session: Promise<void> = Promise.resolve();
  /**
   * Times the connection was replaced, the old one killed in Redis first (a
   * block it left there could still take what arrives: Redis notices a dead
   * peer late). A reply lost with the old one is then gone for good: readers
   * of lists that a block pops compare this before and after (Results.waitFor).
   */
  replacements = 0;
  /**
   * The longest single block (MAX_BLOCK_MS; shorter only in tests, which cannot wait minutes).
   * @internal
   */
  maxBlockMs = MAX_BLOCK_MS;
  /** Aborted by close(): a block in progress ends (null) instead of waiting for a reconnect. */
  private readonly closing = new AbortController();

  constructor(
    private readonly url: string,
    private readonly displayUrl: string,
    private readonly name: string,
    private readonly log: Logger,
    private readonly unblocker: () => Redis,
    /** Told when a block was cut by a lost connection: Redis may have reserved entries whose reply never came. */
    private readonly onLost: () => void = () => undefined,
  ) {}

  private async connection(): Promise<Redis> {
    if (this.closing.signal.aborted) throw new BrokerClosedError();
    if (this.conn === undefined) {
      const conn = createConnection(this.url, 'blocking', this.name, this.log);
      conn.on('ready', () => {
        const previous = this.clientId;
        const replacing = this.connectedBefore;
        this.connectedBefore = true;
        this.clientId = undefined;
        this.session = this.startSession(conn, previous, replacing);
      });
      this.conn = conn;
    }
    const conn = this.conn;
    try {
      await open(conn, this.displayUrl, this.closing.signal);
    } catch (err) {
      throw this.closing.signal.aborted ? new BrokerClosedError() : err;
    }
    return conn;
  }

  private async startSession(conn: Redis, previous: number | undefined, replacing: boolean): Promise<void> {
    try {
      if (previous !== undefined)
        await untilClosed(conn, conn.call('CLIENT', 'KILL', 'ID', String(previous))).catch(
          () => undefined, // gone already
        );
      this.clientId = Number(await untilClosed(conn, conn.client('ID')));
    } catch (err) {
      this.log.debug({ err: messageOf(err), connection: this.name }, 'could not set up the blocking connection');
    }
    if (replacing) this.replacements++;
  }

  /**
   * Runs `call` until it replies, `timeoutMs` passes (null) or `signal`
   * aborts (null, or what Redis had already sent). A block cut by a lost
   * connection is re-armed, or with `endWhenLost` ends (null) so that the
   * caller can look for what the lost reply carried.
   */
  async block<T>(
    call: BlockingCall<T>,
    timeoutMs: number,
    signal?: AbortSignal,
    endWhenLost = false,
  ): Promise<T | null> {
    const deadline = Date.now() + timeoutMs;
    // Every wait before the block is cut short by `signal` too: an abort that lands there
    // would find no block to unblock, and the block sent after it would run its whole course.
    let conn = await unlessAborted(this.connection(), signal);
    for (;;) {
      const remaining = deadline - Date.now();
      if (conn === undefined || signal?.aborted || this.closing.signal.aborted || remaining <= 0) return null;
      // An ended connection does not come back by itself: open it again (or fail).
      if (conn.status === 'end') {
        conn = await unlessAborted(this.connection(), signal);
        continue;
      }
      if (conn.status !== 'ready') {
        await this.untilReady(conn, remaining, signal);
        continue;
      }
      await unlessAborted(this.session, signal);
      const left = deadline - Date.now();
      if (signal?.aborted || left <= 0) return null;
      const outcome = await this.once(conn, call, Math.max(1, Math.min(left, this.maxBlockMs)), signal);
      if (outcome.kind === 'reply') return outcome.value;
      if (outcome.kind === 'error') throw outcome.err;
      // lost: the loop re-arms the block once the connection is back
      this.onLost();
      if (endWhenLost) {
        // Ends once the old connection is replaced (killed), so what its lost reply carried can be looked for.
        if (conn.status !== 'ready') await this.untilReady(conn, deadline - Date.now(), signal);
        if (conn.status === 'ready') await this.session;
        return null;
      }
    }
  }

  private async untilReady(conn: Redis, ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || this.closing.signal.aborted) return;
    let wake = (): void => undefined;
    const stopped = new Promise<void>((resolve) => (wake = resolve));
    signal?.addEventListener('abort', wake, { once: true });
    this.closing.signal.addEventListener('abort', wake, { once: true });
    try {
      await Promise.race([waitReady(conn, ms).catch(() => undefined), stopped]);
    } finally {
      signal?.removeEventListener('abort', wake);
      this.closing.signal.removeEventListener('abort', wake);
    }
  }

  private once<T>(conn: Redis, call: BlockingCall<T>, blockMs: number, signal?: AbortSignal): Promise<Outcome<T>> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (o: Outcome<T>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(watchdog);
        conn.off('close', onClose);
        signal?.removeEventListener('abort', onAbort);
        this.closing.signal.removeEventListener('abort', onClosing);
        resolve(o);
      };
      const onClose = (): void => finish({ kind: 'lost' });
      // close() ends the block at once: its socket's 'close' may come late (a peer that went silent).
      const onClosing = (): void => finish({ kind: 'reply', value: null });
      const watchdog = setTimeout(() => {
        this.log.warn({ blockMs, connection: this.name }, 'a blocking read outlived its timeout; reconnecting');
        finish({ kind: 'lost' });
        conn.disconnect(true);
      }, blockMs + WATCHDOG_GRACE_MS);
      const onAbort = (): void => {
        const unblock = (): void => {
          if (settled) return;
          const id = this.clientId;
          let sent: Promise<unknown>;
          try {
            sent = id === undefined ? Promise.resolve(0) : this.unblocker().client('UNBLOCK', id);
          } catch {
            // No connection to send it on (the broker is closing): nothing more to ask.
            finish({ kind: 'reply', value: null });
            return;
          }
          sent.then(
            (n) => {
              // 0: the block has not reached Redis yet (or just ended): try again until it ends.
              if (Number(n) === 0 && !settled) setTimeout(unblock, UNBLOCK_RETRY_MS);
            },
            () => finish({ kind: 'reply', value: null }),
          );
        };
        unblock();
      };
      conn.once('close', onClose);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.closing.signal.addEventListener('abort', onClosing, { once: true });
      call(conn, blockMs).then(
        (value) => finish({ kind: 'reply', value }),
        (err: unknown) => finish(conn.status === 'ready' ? { kind: 'error', err } : { kind: 'lost' }),
      );
    });
  }

  close(): Promise<void> {
    this.closing.abort();
    const conn = this.conn;
    this.conn = undefined;
    // QUIT would wait behind a block in progress: end the socket.
    conn?.disconnect();
    return Promise.resolve();
  }
}

/**
 * `reply`, or a rejection if the connection closes first: a command in
 * flight on a blocking connection is neither re-sent nor failed when the
 * connection drops (autoResendUnfulfilledCommands is off), so it would hang.
 */
function untilClosed<T>(conn: Redis, reply: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const onClose = (): void => reject(new Error('the connection closed'));
    conn.once('close', onClose);
    reply.then(
      (value) => {
        conn.off('close', onClose);
        resolve(value);
      },
      (err: unknown) => {
        conn.off('close', onClose);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/** `promise`'s value, or undefined as soon as `signal` aborts (the promise runs on; a rejection still rejects). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      promise.catch(() => undefined);
      resolve(undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
