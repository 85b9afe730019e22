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
/**
 * How long a settlement with a result may wait for others while the node is
 * busy (the timer's floor: a Node timer fires after 1 ms at the soonest).
 * Under load a fetch usually carries it first.
 */
export const COALESCE_MS = 1;
/** Settlements gathered that leave without waiting any longer. */
export const COALESCE_MAX = 512;
/**
 * How long a settlement with a result may wait for the next fetch while the
 * node holds jobs not yet started (a backlog: it finishes more jobs and
 * fetches again soon). A node of one child finishes one job at a time, so
 * COALESCE_MS gathers nothing there; riding the fetch spreads a settle
 * batch's fixed cost over the jobs of a fetch (B6: 20 such nodes went from
 * about 5 Redis commands per job to about 2). A result a client waits for
 * comes later by at most this, and only under a backlog: the last job of
 * a burst, or a lone one, still leaves at once.
 */
export const RIDE_MS = 100;

export interface AckerOptions {
  /** How long a settlement without a result may wait for a fetch to carry it (ms; default HOLD_MS). */
  holdMs?: number;
  /** How long a settlement with a result may wait for others while the node is busy (ms; default COALESCE_MS). */
  coalesceMs?: number;
  /** Settlements gathered that leave at once (default COALESCE_MAX). */
  coalesceMax?: number;
  /** How long a settlement with a result may wait for a fetch while the node has a backlog (ms; default RIDE_MS). */
  rideMs?: number;
}

/** Why each batch left (`WorkerStats.settleBatches`): how the node's settlements reached the broker. */
export interface SettleBatchCounts {
  /** Sent at once: the node held no other job (or no fetch was coming for a settlement without a result). */
  immediate: number;
  /** Carried by a fetch, in its round trip. */
  carried: number;
  /** Sent when the coalescing or hold timer ran out. */
  timer: number;
  /** Sent because enough had gathered. */
  full: number;
  /** Sent when the Consumer stopped fetching, blocked waiting for work, or flushed, or when a fetch carrying them was refused. */
  released: number;
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
  /** A fetch carrying the queue was refused (BrokerRefusedError): run() sends it on its own, and no fetch carries it. */
  private sendAlone = false;
  /** Cuts a retry pause short on abandon(). */
  private readonly abandonController = new AbortController();
  /** Sends held settlements when no fetch carried them in time. */
  private holdTimer: NodeJS.Timeout | undefined;
  /** When the hold timer fires (performance.now()). */
  private holdUntil = Infinity;
  /** True while the Consumer's fetch loop will fetch again soon (set by holdWhile()). */
  private fetchSoon: () => boolean = () => false;
  /** True while the node holds other jobs (set by coalesceWhile()). */
  private busy: () => boolean = () => false;
  /** True while the node holds jobs not yet started (set by rideWhile()). */
  private backlogged: () => boolean = () => false;
  /** Some settlement queued carries a result. */
  private queuedResult = false;
  private readonly holdMs: number;
  private readonly coalesceMs: number;
  private readonly coalesceMax: number;
  private readonly rideMs: number;
  readonly batches: SettleBatchCounts = { immediate: 0, carried: 0, timer: 0, full: 0, released: 0 };

  constructor(
    private readonly broker: BrokerConsumer,
    private readonly log: Logger,
    options: AckerOptions = {},
  ) {
    this.holdMs = options.holdMs ?? HOLD_MS;
    this.coalesceMs = options.coalesceMs ?? COALESCE_MS;
    this.coalesceMax = options.coalesceMax ?? COALESCE_MAX;
    this.rideMs = options.rideMs ?? RIDE_MS;
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

  /**
   * Lets settlements with a result gather (up to coalesceMs, or coalesceMax
   * of them, or until a fetch carries them) while `busy()` says the node
   * holds other jobs; once it holds none they leave at once, so a job on an
   * idle node waits for no timer.
   */
  coalesceWhile(busy: () => boolean): void {
    this.busy = busy;
  }

  /**
   * Lets settlements with a result wait longer (up to rideMs) for a fetch to
   * carry them while `backlogged()` says the node holds jobs not yet started
   * and holdWhile()'s `fetchSoon()` says a fetch is coming: so a node of one
   * child, which finishes one job at a time, still settles many per batch.
   */
  rideWhile(backlogged: () => boolean): void {
    this.backlogged = backlogged;
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
    if (!this.queuedResult && hasResult(settlement)) this.queuedResult = true;
    if (this.running !== undefined) return;
    this.next();
  }

  /** Sends what is held now (no fetch is coming soon). */
  release(): void {
    if (this.running !== undefined || this.queue.length === 0 || this.abandoned) return;
    this.start('released');
  }

  /**
   * Nothing is being sent by run(): send the queue now, or let it wait for
   * company (a fetch to ride, more results) as the rules above say.
   */
  private next(): void {
    // While a fetch carries a batch, carry() decides when it returns.
    if (this.queue.length === 0 || this.abandoned || this.carried !== undefined) return;
    const hold = this.holdFor();
    if (hold > 0) this.armHold(hold);
    else this.start(hold === 0 ? 'immediate' : 'full');
  }

  /** How long the queue may wait now: ms, 0 to send at once (also when a flush waits), -1 when full. */
  private holdFor(): number {
    if (this.idleWaiters.length > 0) return 0;
    if (this.queue.length >= this.coalesceMax) return -1;
    if (this.queuedResult) {
      if (!this.busy()) return 0;
      return this.fetchSoon() && this.backlogged() ? this.rideMs : this.coalesceMs;
    }
    return this.fetchSoon() ? this.holdMs : 0;
  }

  /** A hold ends at the earlier of the one armed and `ms` from now. */
  private armHold(ms: number): void {
    const until = performance.now() + ms;
    if (this.holdTimer !== undefined && this.holdUntil <= until) return;
    clearTimeout(this.holdTimer);
    this.holdUntil = until;
    this.holdTimer = setTimeout(() => {
      this.holdTimer = undefined;
      if (this.running === undefined && this.queue.length > 0 && !this.abandoned) this.start('timer');
    }, ms);
  }

  private clearHold(): void {
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    this.holdUntil = Infinity;
  }

  /** Sends the queue from the next turn of the event loop (what that turn adds goes with it). */
  private start(why: keyof SettleBatchCounts): void {
    this.clearHold();
    this.batches[why]++;
    this.running = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.run());
  }

  /** Resolves once everything pushed so far has been confirmed by the broker (or abandoned). */
  flush(): Promise<void> {
    if (this.abandoned || (this.running === undefined && this.carried === undefined && this.queue.length === 0))
      return Promise.resolve();
    const waiting = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.release();
    return waiting;
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
    this.queuedResult = false;
    this.clearHold();
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
    if (this.inFlight || this.queue.length === 0 || this.abandoned || this.sendAlone) return fetch([]);
    const batch = this.queue;
    this.queue = [];
    this.queuedResult = false;
    this.inFlight = true;
    this.onWire = batch;
    this.clearHold();
    this.batches.carried++;
    let done!: () => void;
    this.carried = new Promise<void>((resolve) => (done = resolve));
    try {
      return await fetch(batch);
    } catch (err) {
      if (!this.abandoned) {
        this.requeue(batch);
        // Refused, maybe for one of them: they go on their own now (halved down to the one at fault), not on the next fetch.
        if (err instanceof BrokerRefusedError) this.sendAlone = true;
      }
      throw err;
    } finally {
      this.inFlight = false;
      this.onWire = [];
      this.carried = undefined;
      done();
      if (this.running === undefined) {
        // What arrived while the fetch was on the wire waits for the next one (or a timer), as push() decides.
        if (this.queue.length === 0) this.wakeIdle();
        else if (this.sendAlone) this.start('released');
        else this.next();
      }
    }
  }

  private async run(): Promise<void> {
    // start() decided to send what is queued; later batches are decided here, as push() would.
    let decided = true;
    for (;;) {
      if (this.carried !== undefined) {
        await this.carried;
        decided = false;
        continue;
      }
      if (this.queue.length === 0 || this.abandoned) break;
      if (!decided && this.sendAlone) this.batches.released++;
      else if (!decided) {
        const hold = this.holdFor();
        if (hold > 0) {
          this.armHold(hold);
          break;
        }
        this.batches[hold < 0 ? 'full' : 'immediate']++;
      }
      decided = false;
      const batch = this.queue;
      this.queue = [];
      this.queuedResult = false;
      this.sendAlone = false;
      this.inFlight = true;
      this.clearHold();
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
      this.requeue(failed.rest);
      // One warning per episode; the retries that follow are debug.
      const level = this.failures === 0 ? 'warn' : 'debug';
      const wait = retryDelay(this.failures++, SETTLE_RETRY);
      this.log[level](
        { err: failed.err, pending: this.queue.length, retryInMs: wait },
        'could not settle jobs with the broker; will retry',
      );
      // The failed batch is back at the front: a fetch may carry it (and what followed) during the pause.
      await abortableSleep(wait, this.abandonController.signal);
      decided = true;
    }
    this.running = undefined;
    if (this.queue.length === 0 || this.abandoned) this.wakeIdle();
  }

  /** Puts unconfirmed settlements back in front, in order. */
  private requeue(batch: Settlement[]): void {
    this.queue = batch.concat(this.queue);
    this.queuedResult = this.queue.some(hasResult);
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
