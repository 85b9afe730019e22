import type { Redis } from 'ioredis';
import { ioredis } from './ioredis-module.js';
import type { Logger } from 'pino';

/** How often a watched connection is looked at (unref'd: an idle process is not kept alive). */
const CHECK_EVERY_MS = 1_000;
/** How long a fresh connection's PING may take to prove Redis answers. */
const PROBE_TIMEOUT_MS = 2_000;

/**
 * Replaces a command connection that went silent while Redis answers: a
 * peer gone without a reset (a failed-over master's host, a NAT or load
 * balancer that dropped the flow) leaves its commands unanswered for as
 * long as TCP keeps the socket, for ever on a flow whose far side still
 * acknowledges, and a Worker's commands have no timeout (they must not be
 * cut short). Once commands have waited `silentMs` with no byte from Redis,
 * a fresh connection PINGs: answered, the watched connection is dead and is
 * dropped (its unanswered commands fail as on any lost connection, and it
 * reconnects); unanswered, Redis itself is frozen or away, and nothing is
 * done: no connection would do better.
 */
export class SilentConnectionGuard {
  private heardAt = performance.now();
  private probing = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly conn: Redis,
    private readonly url: string,
    private readonly silentMs: number,
    private readonly log: Logger,
  ) {
    // A new socket for each connect and reconnect: listen to each one's bytes, the open one's too (the guard
    // comes once the connection is up: without it, a busy connection was taken for a silent one).
    const listen = (): void => void conn.stream.on('data', () => (this.heardAt = performance.now()));
    conn.on('connect', () => {
      this.heardAt = performance.now();
      listen();
    });
    if (conn.status === 'ready') listen();
    this.timer = setInterval(() => void this.check(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async check(): Promise<void> {
    const queue = (this.conn as unknown as { commandQueue: { length: number } }).commandQueue;
    if (queue.length === 0) {
      this.heardAt = performance.now();
      return;
    }
    const silentFor = performance.now() - this.heardAt;
    if (this.probing || this.conn.status !== 'ready' || silentFor < this.silentMs) return;
    this.probing = true;
    try {
      if (!(await answers(this.url))) return;
      // Still silent after the probe: replace it (a reply that came meanwhile means it was only slow).
      if (performance.now() - this.heardAt < this.silentMs) return;
      this.log.warn(
        { silentForMs: Math.round(performance.now() - this.heardAt), pending: queue.length },
        'the Redis connection went silent while Redis answers a new one: reconnecting',
      );
      this.conn.disconnect(true);
    } finally {
      this.probing = false;
    }
  }
}

/** True when Redis at `url` answers a PING on a fresh connection within PROBE_TIMEOUT_MS. */
async function answers(url: string): Promise<boolean> {
  const probe = new (ioredis().Redis)(url, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableReadyCheck: false,
    connectionName: 'prefork:probe',
  });
  probe.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  try {
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS)));
    const pong = probe
      .connect()
      .then(() => probe.ping())
      // An error reply is an answer too (NOAUTH: it is Redis, and it is not frozen).
      .then(
        () => true,
        (err: unknown) => err instanceof Error && err.name === 'ReplyError',
      );
    return await Promise.race([pong, late]);
  } finally {
    clearTimeout(timer);
    probe.disconnect();
  }
}

/**
 * How long a Worker's commands may wait with no byte from Redis before a
 * probe: half the lease (at most 10 s, at least 1 s), so a heartbeat that
 * hung on a dead connection is sent again on a new one while its lease
 * still holds. Redis answering slowly sends bytes all along (a pipeline's
 * replies come one by one); a Redis busy with a script answers no probe.
 */
export function silenceBound(leaseMs: number): number {
  return Math.min(10_000, Math.max(1_000, leaseMs / 2));
}
