import type { Logger } from 'pino';
import type { BrokerConsumer, Settlement } from '../broker/types.js';
import { BrokerRefusedError, messageOf } from '../errors.js';
import { retryDelay, type BackoffPolicy } from '../util/backoff.js';
import { abortableSleep } from '../util/sleep.js';

/** Pauses between failed settlement batches: 0.1 s doubling to 5 s. */
const SETTLE_RETRY: BackoffPolicy = { delay: 100, cap: 5_000 };
/**
 * How long a settlement without a result may wait for the next fetch to
 * carry it. Nobody waits on it (no result to announce), and under load a
 * fetch comes every few jobs: holding it saves a round trip per few jobs.
 */
export const HOLD_MS = 50;

export interface AckerOptions {
  /** How long a settlement without a result may wait for a fetch to carry it (ms; default HOLD_MS). */
  holdMs?: number;
}

/**
 * Sends settlements (acks, retries, dead letters, results) to the broker in
 * batches, keeps a batch the broker could not take until it can (or
 * abandon()), and isolates one it refuses by halving (docs/architecture.md).
 */
export class Acker {
  private queue: Settlement[] = [];
  private running: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];
  private failures = 0;
  /** A batch is on the wire (sent here or carried by a fetch): the next one waits, so batches reach the broker in order. */
  private inFlight = false;
  /** The settlements of the batch on the wire (counted in backlog until confirmed). */
  private onWire: readonly Settlement[] = [];
  /** Settles when the batch a fetch carries has its answer. */
  private carried: Promise<void> | undefined;
  /** Cuts a retry pause short on abandon(). */
  private readonly abandonController = new AbortController();
  /** Sends held settlements when no fetch carried them in time. */
  private holdTimer: NodeJS.Timeout | undefined;
  /** True while the Consumer's fetch loop will fetch again soon (set by holdWhile()). */
  private fetchSoon: () => boolean = () => false;
  private readonly holdMs: number;

  constructor(
    private readonly broker: BrokerConsumer,
    private readonly log: Logger,
    options: AckerOptions = {},
  ) {
    this.holdMs = options.holdMs ?? HOLD_MS;
  }

  /** Settlements not yet confirmed by the broker: waiting, and on the wire. */
  get backlog(): number {
    return this.queue.length + this.onWire.length;
  }

  /**
   * Lets settlements without a result wait (up to holdMs) for a fetch to
   * carry them while `fetchSoon()` says one is coming; the Consumer calls
   * release() when it stops fetching or blocks waiting for work.
   */
  holdWhile(fetchSoon: () => boolean): void {
    this.fetchSoon = fetchSoon;
  }

  push(settlement: Settlement): void {
    if (this.abandoned) {
      this.log.warn(
        { jobId: settlement.delivery.job.id, kind: settlement.kind },
        'settlement after the stop deadline dropped; the job comes back when the lease expires',
      );
      return;
    }
    this.queue.push(settlement);
    if (this.running !== undefined) return;
    if (!hasResult(settlement) && this.fetchSoon()) {
      this.holdTimer ??= setTimeout(() => this.release(), this.holdMs);
      return;
    }
    this.release();
  }

  /** Sends what is held now (no fetch is coming soon). */
  release(): void {
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    if (this.running !== undefined || this.queue.length === 0 || this.abandoned) return;
    this.running = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.run());
  }

  /** Resolves once everything pushed so far has been confirmed by the broker (or abandoned). */
  flush(): Promise<void> {
    if (this.abandoned || (this.running === undefined && this.carried === undefined && this.queue.length === 0))
      return Promise.resolve();
    this.release();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Gives up on everything not yet confirmed (a stop deadline passed with the
   * broker away) and returns it, so the caller can log it. Those jobs stay
   * reserved in the broker and come back to a queue when this node is
   * unregistered or its lease expires (at least once). Later pushes are dropped.
   */
  abandon(): Settlement[] {
    const unconfirmed = [...this.onWire, ...this.queue];
    this.queue = [];
    clearTimeout(this.holdTimer);
    this.abandonController.abort();
    this.wakeIdle();
    return unconfirmed;
  }

  private get abandoned(): boolean {
    return this.abandonController.signal.aborted;
  }

  /**
   * Lets a fetch carry the settlements gathered so far in its own round trip
   * (one broker call instead of two under load). Only when no batch is on the
   * wire, so batches stay in order; if the fetch fails they are queued again
   * in front and sent by the usual loop (which isolates a refused one).
   */
  async carry<T>(fetch: (settle: Settlement[]) => Promise<T>): Promise<T> {
    if (this.inFlight || this.queue.length === 0 || this.abandoned) return fetch([]);
    const batch = this.queue;
    this.queue = [];
    this.inFlight = true;
    this.onWire = batch;
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    let done!: () => void;
    this.carried = new Promise<void>((resolve) => (done = resolve));
    try {
      return await fetch(batch);
    } catch (err) {
      if (!this.abandoned) this.queue = batch.concat(this.queue);
      throw err;
    } finally {
      this.inFlight = false;
      this.onWire = [];
      this.carried = undefined;
      done();
      if (this.running === undefined) {
        // What arrived while the fetch was on the wire waits for the next one (or the hold timer), as push() decides.
        if (this.queue.length > 0 && (!this.fetchSoon() || this.queue.some(hasResult))) this.running = this.run();
        else if (this.queue.length > 0) this.holdTimer ??= setTimeout(() => this.release(), this.holdMs);
        else this.wakeIdle();
      }
    }
  }

  private async run(): Promise<void> {
    for (;;) {
      if (this.carried !== undefined) {
        await this.carried;
        continue;
      }
      if (this.queue.length === 0 || this.abandoned) break;
      const batch = this.queue;
      this.queue = [];
      this.inFlight = true;
      clearTimeout(this.holdTimer);
      this.holdTimer = undefined;
      let failed: { rest: Settlement[]; err: unknown } | undefined;
      try {
        failed = await this.send(batch);
      } finally {
        this.inFlight = false;
        this.onWire = [];
      }
      if (failed === undefined) {
        if (this.failures > 0) this.log.info({ failures: this.failures }, 'settlements are reaching the broker again');
        this.failures = 0;
        continue;
      }
      if (this.abandoned) break;
      this.queue = failed.rest.concat(this.queue);
      // One warning per episode; the retries that follow are debug.
      const level = this.failures === 0 ? 'warn' : 'debug';
      const wait = retryDelay(this.failures++, SETTLE_RETRY);
      this.log[level](
        { err: failed.err, pending: this.queue.length, retryInMs: wait },
        'could not settle jobs with the broker; will retry',
      );
      // The failed batch is back at the front: a fetch may carry it (and what followed) during the pause.
      await abortableSleep(wait, this.abandonController.signal);
    }
    this.running = undefined;
    this.wakeIdle();
  }

  /**
   * Sends a batch; a refused part is halved until the settlement at fault is
   * alone (a few extra round trips, never a loop). Settlements are idempotent
   * in the broker (only an entry still reserved moves), so re-sending the part
   * of a refused batch that had gone through changes nothing. Returns what is
   * still unconfirmed, in order, when a transient error stops it.
   */
  private async send(batch: Settlement[]): Promise<{ rest: Settlement[]; err: unknown } | undefined> {
    const parts = [batch];
    for (let part = parts.pop(); part !== undefined; part = parts.pop()) {
      this.onWire = part;
      try {
        await this.broker.settle(part);
      } catch (err) {
        if (!(err instanceof BrokerRefusedError)) return { rest: [part, ...parts.reverse()].flat(), err };
        if (part.length === 1) {
          this.refused(part[0] as Settlement, err);
          continue;
        }
        const half = part.length >> 1;
        parts.push(part.slice(half), part.slice(0, half));
      }
    }
    return undefined;
  }

  private refused(s: Settlement, err: unknown): void {
    const { job } = s.delivery;
    this.log.error(
      { err, jobId: job.id, task: job.task, queue: s.delivery.queue, kind: s.kind },
      `the ${s.kind} of job ${job.id} was dropped: ${messageOf(err)} (unless the broker settled the job before the step it refused, such as writing or announcing the result, the job stays reserved by this node until it stops, then goes back to its queue)`,
    );
  }

  private wakeIdle(): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

/** A settlement someone may be waiting on: a result to store and announce. */
function hasResult(s: Settlement): boolean {
  return s.kind === 'progress' || ('result' in s && s.result !== undefined);
}
