import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { BrokerConsumer, Delivery, Settlement } from '../broker/types.js';
import type { ApplyOptions } from '../pool/job.js';
import {
  BrokerRefusedError,
  OptionError,
  RevokedError,
  WorkerLostError,
  messageOf,
  type PoolFailedError,
} from '../errors.js';
import { checkRateLimit, isResultTtl, throwOptionError } from '../job-option-checks.js';
import { resolveApplyOptions } from '../pool/apply-options.js';
import type { Pool } from '../pool/pool.js';
import { serializeError } from '../protocol/error-codec.js';
import { Acker } from './acker.js';
import { HoardGuard } from './hoard-guard.js';
import { JobLog, type JobLogLevel, type JobRun } from './job-log.js';
import type { Limited, RateGate } from './rate-gate.js';
import type { Prefetch } from './prefetch.js';
import {
  finalRecord,
  withOutcome,
  malformedSettlement,
  record,
  resultKeeping,
  revokedSettlement,
  settlementFor,
  type Attempt,
  type ResultKeeping,
} from './outcome.js';
import type { QueueSelection } from './queue-selection.js';
import type { BrokerFailure } from '../observe/node-health.js';
import { retryDelay, type BackoffPolicy } from '../util/backoff.js';
import { abortableSleep } from '../util/sleep.js';
import { within } from '../util/within.js';

/**
 * A blocking wait never outlives this. Wake-ups are not lost (new entries and
 * delayed-job markers end a block; a dead connection is re-armed or caught by
 * the blocking connection's watchdog), so this is long: an idle node pays a
 * fetch per wait, and the Redis broker re-arms its block within it (one
 * command per MAX_BLOCK_MS in broker/redis/blocking.ts).
 */
const MAX_WAIT_MS = 600_000;
/** Pauses between failed fetches: 0.1 s doubling to 5 s. */
const FETCH_RETRY: BackoffPolicy = { delay: 100, cap: 5_000 };
/**
 * How long stopFetching() waits for the loop's call in flight (a fetch, a
 * block being ended, a rate-limit bucket's answer). A Redis that answers
 * takes milliseconds; one that stopped answering would hold the stop for
 * ever. Past it, what that call brings is not run here: Redis holds those
 * jobs as this node's, and they go back to their queues when it leaves the
 * cluster (its unregister comes after the fetch) or its lease expires.
 */
export const STOP_FETCH_MS = 5_000;

export interface ConsumerSettings {
  broker: BrokerConsumer;
  pool: Pool;
  selection: QueueSelection;
  /** The node's current id (it changes when a fenced node re-registers). */
  nodeId: () => string;
  /**
   * True while the node surely holds its lease by its own clock: jobs a
   * blocking wait delivers are then handed over without a broker round trip
   * to confirm it. Without it, the broker always confirms.
   */
  leaseHeld?: () => boolean;
  /** The node's name, written into results. */
  nodeName: string;
  /** Most jobs held at once (buffered + running): fixed, or sized from what the node measures. */
  prefetch: Prefetch;
  /** Which fetched jobs a rate limit governs, and their turns. */
  rates: RateGate;
  /** Write RECEIVED and STARTED states too (one more result write per job each). */
  trackStarted: boolean;
  /** Whether a job id was revoked: such a job is skipped when fetched, and a failure of one is not retried. */
  revoked?: (id: string) => boolean;
  /** The level of the per-job lines (default info). */
  jobLogLevel?: JobLogLevel;
  /** A broker call of the loop outstanding longer than its own wait plus this (ms) means the loop is stuck (`health()`). */
  stallAfterMs: number;
  log: Logger;
}

/** Told of each job's life on the node; each call comes after the Consumer's own bookkeeping. */
export interface ConsumerObserver {
  /** Fetched and handed to the pool. */
  received?(delivery: Delivery): void;
  /** Started in child `pid`. */
  started?(delivery: Delivery, pid: number, startedAt: number): void;
  /** Reported progress (throttled in the child); `kept`: the job's result keeps it. */
  progress?(delivery: Delivery, value: unknown, at: number, kept: boolean): void;
  /** Settled (`run`: the attempt, when a child ran it; `outcome`: its value or error). */
  settled?(settlement: Settlement, run: JobRun | undefined, outcome: unknown): void;
}

/** The Consumer's counters over a node's life (`WorkerStats.consumer`). */
export interface ConsumerCounts {
  /** Fetched and not yet settled by the pool. */
  reserved: number;
  /** Jobs fetched from the broker. */
  fetched: number;
  /** Jobs that succeeded (acked). */
  succeeded: number;
  /** Failed attempts sent back for a delayed retry. */
  retried: number;
  /** Jobs sent to the dead set (retries spent, unknown task, malformed, ...). */
  dead: number;
  /** Jobs given back to their queue unstarted or unfinished (a stop, a failed pool). */
  givenBack: number;
  /** Jobs a rate limit sent back to wait in the broker for their turn. */
  deferred: number;
  /** The prefetch limit now: most jobs held at once, buffered and running (self-sized unless `prefetchMultiplier` is given). */
  prefetchLimit: number;
  /** Most jobs held at once so far (reserved at its highest). */
  peakReserved: number;
}

/**
 * Broker → pool: fetches batches in the order the QueueSelection plans, up to
 * the prefetch limit, hands every job to the pool at once (the pool's
 * TaskHandler buffers it), and turns each outcome into a settlement for the
 * Acker. When the queues are empty it blocks on the broker; it never polls.
 */
export class Consumer {
  readonly counts: ConsumerCounts;
  readonly acker: Acker;
  private readonly jobLog: JobLog;
  private loop: Promise<void> | undefined;
  private stopping = false;
  /** stopFetching() gave up on the loop's call in flight: what it brings is not run (STOP_FETCH_MS). */
  private abandoned = false;
  /** Aborted by stopFetching(): cuts a retry pause short. */
  private stopController = new AbortController();
  /** Set when the pool failed: a job whose child it killed goes back to its queue. */
  private poolFailure: PoolFailedError | undefined;
  private waitController: AbortController | undefined;
  private waitDeadline = Infinity;
  private roomWaiter: (() => void) | undefined;
  /** Set while every queue is paused: resolved by a change of the pauses, or a stop. */
  private pauseWaiter: (() => void) | undefined;
  /** Bumped when the node is fenced: outcomes of older deliveries must not give jobs back (they were recovered elsewhere). */
  private epoch = 0;
  private fencedHandler: ((seenAs: string) => Promise<void>) | undefined;
  /** Bucket requests on their way (stopFetching waits for them: their jobs are still this node's). */
  private readonly admitting = new Set<Promise<void>>();
  /** Jobs handed to the pool and not yet started in a child (buffered or in a child's pipe): what a fencing may drop. */
  private readonly unstarted = new Set<Unstarted>();
  /** Ids of jobs the HoardGuard took back, until their settlement: given back as `spread`, not as redeliveries. */
  private readonly spread = new Set<string>();
  private readonly hoardGuard: HoardGuard;

  /** Blocked on the broker waiting for work: no fetch comes until something arrives. */
  private blocked = false;
  /** Broker calls of the loop that failed in a row (sets the retry pause). */
  private failures = 0;
  /** What the last of them failed with, while they fail (the readiness probe says it). */
  private lastFailure: BrokerFailure | undefined;
  private crashHandler: (err: unknown) => void = (err) => this.settings.log.fatal({ err }, 'consumer loop crashed');
  /** Told of each job's life (metrics, events). */
  private readonly observers: ConsumerObserver[] = [];
  /** When (performance.now()) the loop's current await should be over: past it, the loop is stuck. */
  private turnDeadline = Infinity;
  /** When (performance.now()) a broker call of the loop last came back, answered or failed. */
  private returnedAt = -Infinity;
  private ended = false;

  constructor(private readonly settings: ConsumerSettings) {
    this.counts = {
      reserved: 0,
      fetched: 0,
      succeeded: 0,
      retried: 0,
      dead: 0,
      givenBack: 0,
      deferred: 0,
      // Read when asked: the limit moves on each reply, on resize and when the HoardGuard gives jobs back.
      get prefetchLimit() {
        return settings.prefetch.limit;
      },
      peakReserved: 0,
    };
    this.acker = new Acker(settings.broker, settings.log);
    this.hoardGuard = new HoardGuard({
      prefetch: settings.prefetch,
      reserved: () => this.counts.reserved,
      oldestUnstartedAt: () => this.unstarted.values().next().value?.since,
      giveBack: (n) => {
        // Only this Consumer's jobs: others applied to worker.pool are not the queues' to take back.
        const mine = new Set<string>();
        for (const u of this.unstarted) mine.add(u.id);
        const ids = settings.pool.withdrawQueued(n, (id) => mine.has(id));
        for (const id of ids) this.spread.add(id);
        return ids.length;
      },
      running: () => !this.stopping,
      log: settings.log,
    });
    this.jobLog = new JobLog(settings.log, settings.jobLogLevel ?? 'info');
    // While the loop is fetching (not blocked, not stopped), a fetch will carry result-less acks.
    this.acker.holdWhile(() => this.loop !== undefined && !this.stopping && !this.blocked);
    // While other jobs are held, results gather into batches; the last one out leaves at once.
    this.acker.coalesceWhile(() => this.counts.reserved > 0);
    // With jobs not yet started, results wait for the next fetch (a node of one child gathers none otherwise).
    this.acker.rideWhile(() => this.unstarted.size > 0);
  }

  start(): void {
    this.stopping = false;
    this.stopController = new AbortController();
    // Broker failures are retried inside run(); anything else escaping it is a crash: nothing would fetch again.
    this.ended = false;
    this.loop = this.run()
      .catch((err: unknown) => this.crashHandler(err))
      .finally(() => (this.ended = true));
  }

  /** Adds an observer of each job's life on this node (called after the Consumer's own bookkeeping). */
  observe(observer: ConsumerObserver): void {
    this.observers.push(observer);
  }

  /**
   * The fetch loop's health: `stuckForMs` > 0 when one of its awaits (a
   * fetch, a blocking wait, a re-registration) outlived its own wait plus
   * `stallAfterMs`. Waiting for the pool to free room is not stuck.
   * `returnedAgoMs`: since a broker call of the loop last came back.
   */
  health(): {
    running: boolean;
    stuckForMs: number;
    returnedAgoMs: number;
    brokerFailures: number;
    lastFailure: BrokerFailure | undefined;
  } {
    const now = performance.now();
    return {
      running: this.loop !== undefined && !this.ended,
      stuckForMs: Math.max(0, now - this.turnDeadline),
      returnedAgoMs: now - this.returnedAt,
      brokerFailures: this.failures,
      lastFailure: this.lastFailure,
    };
  }

  /** The loop's next await should end within `ms` (plus the stall allowance). */
  private expectWithin(ms: number): void {
    this.turnDeadline = performance.now() + ms + this.settings.stallAfterMs;
  }

  /** Called when the fetch loop crashed (a bug, a broker reply it cannot handle; not the broker being away): the Worker stops the node. */
  onCrash(handler: (err: unknown) => void): void {
    this.crashHandler = handler;
  }

  /** Stop fetching; resolves when the fetch loop has ended (jobs already handed to the pool carry on). */
  async stopFetching(): Promise<void> {
    this.stopping = true;
    this.hoardGuard.stop();
    this.acker.release();
    this.stopController.abort();
    this.waitController?.abort();
    this.roomWaiter?.();
    this.pauseWaiter?.();
    const stopped = (async () => {
      await this.loop;
      await Promise.all(this.admitting);
      return true;
    })();
    if ((await within(stopped, STOP_FETCH_MS)) === true) return;
    this.abandoned = true;
    this.settings.log.warn(
      { stopFetchMs: STOP_FETCH_MS },
      `the node's last call to the broker (a fetch, or a wait for work) did not end within ${STOP_FETCH_MS} ms: the jobs it may bring are not run here: they go back to their queues when the node leaves the cluster or its lease expires`,
    );
  }

  /**
   * A queue was paused or resumed (or the node went quiet): a blocking wait
   * ends (it may watch a queue now paused, or miss one resumed), and a loop
   * with every queue paused looks again. Jobs held run on.
   */
  queuesChanged(): void {
    this.waitController?.abort();
    this.pauseWaiter?.();
  }

  /** Called with the node id a fetch was sent under when it finds the node fenced; the Worker drops the buffer and re-registers in it. */
  onFenced(handler: (seenAs: string) => Promise<void>): void {
    this.fencedHandler = handler;
  }

  /**
   * The pool failed and killed its children: the jobs they were running did
   * not fail on their own, so they go back to their queues (as the buffered
   * ones do, rejected with the PoolFailedError itself).
   */
  poolFailed(err: PoolFailedError): void {
    this.poolFailure = err;
  }

  /**
   * The pool's size (autoscale: its max) changed: the prefetch limit follows
   * it, and a loop waiting for room looks again.
   */
  resize(processes: number): void {
    this.settings.prefetch.resize(processes);
    this.roomWaiter?.();
  }

  /** A delayed job is due at `at` (this process's clock, as the broker reports it): cut a longer wait short so it is promoted on time. */
  noteDue(at: number | undefined): void {
    if (at !== undefined && at < this.waitDeadline) this.waitController?.abort();
  }

  private async run(): Promise<void> {
    const { prefetch } = this.settings;
    while (!this.stopping) {
      const limit = prefetch.limit;
      const room = limit - this.counts.reserved;
      // Fetch in batches: wait until at least half the prefetch window is free.
      if (room < Math.max(1, Math.floor(limit / 2))) {
        this.turnDeadline = Infinity;
        await new Promise<void>((resolve) => (this.roomWaiter = resolve));
        this.roomWaiter = undefined;
        continue;
      }
      // The fetch carries the settlements gathered so far: one round trip instead of two under load.
      const plan = this.settings.selection.plan(room);
      if (plan.length === 0) {
        await this.whilePaused();
        continue;
      }
      const nodeId = this.settings.nodeId();
      prefetch.sent(this.counts.reserved);
      this.expectWithin(0);
      let carried = 0;
      const reply = await this.fromBroker(
        'fetch from the broker',
        () =>
          this.acker.carry((settle) => {
            carried = settle.length;
            return this.settings.broker.fetch({ nodeId, plan, count: room, settle });
          }),
        // A refused fetch that carried settlements may be refused for one of them: the Acker sends them on their own.
        () => carried === 0,
      );
      const got = reply === undefined || reply.fenced ? [] : reply.deliveries;
      prefetch.replied(this.counts.reserved, room, got.length, payloadBytes(got));
      if (reply === undefined) continue;
      if (reply.fenced) {
        this.expectWithin(0);
        await this.fromBroker('registering again after the lease was lost', async () => this.fencedHandler?.(nodeId));
        continue;
      }
      this.dispatchAll(reply.deliveries);
      if (reply.deliveries.length < room && !this.stopping)
        await this.waitForWork(reply.nextDueAt, room - reply.deliveries.length);
    }
  }

  /**
   * A broker call of the loop. Its failure (the broker away, a timeout) is
   * logged and paused on (100 ms doubling to 5 s), then the loop goes on: it
   * resolves undefined. A refusal the broker would repeat (BrokerRefusedError:
   * e.g. a queue's key of another type) is no such failure: retried, it would
   * leave the node heartbeating and fetching nothing for ever, so it is
   * thrown to start()'s crash path (docs/failure-modes.md), unless
   * `refusalIsFinal` says the call may have been refused for something
   * else it carried.
   */
  private async fromBroker<T>(
    what: string,
    call: () => Promise<T>,
    refusalIsFinal: () => boolean = () => true,
  ): Promise<T | undefined> {
    try {
      const value = await call();
      this.returnedAt = performance.now();
      if (this.failures > 0) this.settings.log.info({ failures: this.failures }, 'broker reachable again; fetching');
      this.failures = 0;
      this.lastFailure = undefined;
      return value;
    } catch (err) {
      this.returnedAt = performance.now();
      const refused = err instanceof BrokerRefusedError;
      if (refused && refusalIsFinal()) throw err;
      this.lastFailure = { message: messageOf(err), refused };
      // One warning per episode; the retries that follow are debug, as is a call cut by the stop (no retry comes).
      const level = this.failures === 0 && !this.stopping ? 'warn' : 'debug';
      const wait = retryDelay(this.failures++, FETCH_RETRY);
      this.expectWithin(wait);
      this.settings.log[level](
        { err, retryInMs: wait },
        refused
          ? `${what} was refused: ${messageOf(err)}; the settlements it carried go on their own, and it is tried again`
          : `${what} failed; retrying`,
      );
      await abortableSleep(wait, this.stopController.signal);
      return undefined;
    }
  }

  /** Every queue is paused: settlements go out on their own, and nothing is fetched until a queue is resumed. */
  private async whilePaused(): Promise<void> {
    this.blocked = true;
    this.acker.release();
    await new Promise<void>((resolve) => (this.pauseWaiter = resolve));
    this.pauseWaiter = undefined;
    this.blocked = false;
  }

  /**
   * Blocks for work. A wait that delivered fewer jobs than it asked for
   * found the streams empty behind them: the loop waits again rather than
   * fetching first (a round trip per job on an idle node, on the way of
   * the next job's latency). Anything else goes back to the loop's fetch.
   */
  private async waitForWork(nextDueAt: number | undefined, count: number): Promise<void> {
    let want = count;
    while (want > 0 && !this.stopping) {
      const got = await this.waitOnce(nextDueAt, want);
      if (got === undefined || got === 0 || got >= want) return;
      want = this.settings.prefetch.limit - this.counts.reserved;
    }
  }

  /** One blocking wait; how many jobs it delivered, or undefined when the loop must fetch (a due time, a failure, paused). */
  private async waitOnce(nextDueAt: number | undefined, count: number): Promise<number | undefined> {
    const now = Date.now();
    if (nextDueAt !== undefined && nextDueAt <= now) return undefined;
    // Paused since the fetch: the loop waits for a resume instead.
    if (this.settings.selection.names.length === 0) return undefined;
    const timeout = Math.min(MAX_WAIT_MS, nextDueAt === undefined ? MAX_WAIT_MS : nextDueAt - now);
    this.waitController = new AbortController();
    this.waitDeadline = now + timeout;
    this.blocked = true;
    this.acker.release();
    this.expectWithin(timeout);
    try {
      const { signal } = this.waitController;
      const nodeId = this.settings.nodeId();
      const held = this.settings.leaseHeld;
      // Held under the id the wait reserved for: a node that re-registered meanwhile has the broker confirm.
      const leaseHeld = held && (() => this.settings.nodeId() === nodeId && held());
      const reply = await this.fromBroker('waiting for work on the broker', () =>
        this.settings.broker.waitForWork(nodeId, this.settings.selection.names, timeout, signal, count, leaseHeld),
      );
      if (reply === undefined) return undefined;
      // A due time learned while waiting comes back to the loop: its fetch promotes the job when due, else
      // the wait that follows ends then. Never a sleep until then: new work would wait as long (minutes).
      this.dispatchAll(reply.deliveries);
      return reply.nextDueAt === undefined ? reply.deliveries.length : undefined;
    } finally {
      this.blocked = false;
      this.waitController = undefined;
      this.waitDeadline = Infinity;
    }
  }

  /** The node took a new id: a blocking wait under the old one would take jobs for a node that no longer exists. */
  nodeIdChanged(): void {
    this.waitController?.abort();
  }

  /**
   * The node was fenced: its reserved jobs were recovered by another node.
   * Jobs not yet started are dropped (not given back: they exist elsewhere
   * now); jobs running finish, and their late acks change nothing. Resolves
   * with how many were dropped once each unstarted job is settled: those in
   * the pool's buffer go at once, those in a child's pipe when the child
   * answers (one whose start was already on its way runs instead).
   */
  dropBuffered(): Promise<number> {
    this.epoch++;
    this.nodeIdChanged();
    const held = [...this.unstarted];
    this.settings.pool.withdraw();
    if (held.length === 0) return Promise.resolve(0);
    return new Promise((resolve) => {
      let left = held.length;
      let dropped = 0;
      for (const entry of held) {
        // A second fencing before the first one's count is in: both hear of it.
        const earlier = entry.onLeave;
        entry.onLeave = (wasDropped) => {
          earlier?.(wasDropped);
          if (wasDropped) dropped++;
          if (--left === 0) resolve(dropped);
        };
      }
    });
  }

  private dispatchAll(deliveries: readonly Delivery[]): void {
    if (deliveries.length === 0 || this.abandoned) return;
    const queues = new Set<string>();
    let limited: Limited[] | undefined;
    for (const delivery of deliveries) {
      queues.add(delivery.queue);
      this.counts.reserved++;
      this.counts.fetched++;
      const intervalMs = this.rateInterval(delivery);
      if (intervalMs === undefined) this.dispatch(delivery);
      else (limited ??= []).push({ delivery, intervalMs });
    }
    this.settings.selection.delivered(queues);
    if (this.counts.reserved > this.counts.peakReserved) this.counts.peakReserved = this.counts.reserved;
    this.hoardGuard.arrived();
    if (limited !== undefined) this.admit(limited);
  }

  /**
   * The interval a rate limit spaces this job's start by, or undefined (also
   * for a job with a bad rateLimit, which badOptions() dead-letters, and a
   * revoked one: dispatch() skips it without taking a turn).
   */
  private rateInterval(delivery: Delivery): number | undefined {
    if (delivery.malformed !== undefined) return undefined;
    const interval = this.settings.rates.intervalOf(delivery.job);
    return interval !== undefined && this.settings.revoked?.(delivery.job.id) === true ? undefined : interval;
  }

  /**
   * Asks the buckets for the turns of these jobs (one round trip per batch):
   * those whose turn is now go to the pool, the others back to the broker's
   * delayed set until their turn (docs/architecture.md, "Rate limits").
   */
  private admit(limited: readonly Limited[]): void {
    const epoch = this.epoch;
    const done = this.settings.rates.admit(limited).then(({ start, wait }) => {
      // The stop went on without this answer: these jobs are not run here (STOP_FETCH_MS).
      if (this.abandoned) {
        for (let i = 0; i < limited.length; i++) this.release();
        return;
      }
      // Fenced meanwhile: these jobs were recovered and belong to another node.
      if (epoch !== this.epoch) {
        for (let i = 0; i < limited.length; i++) this.release();
        this.settings.broker.forget?.(limited.map((l) => l.delivery));
        return;
      }
      for (const delivery of start) {
        if (this.stopping) this.finish({ kind: 'defer', delivery, delay: 0, slot: false });
        else this.dispatch(delivery);
      }
      for (const { delivery, delay, slot } of wait) {
        this.counts.deferred++;
        this.finish({ kind: 'defer', delivery, delay, slot });
      }
    });
    this.admitting.add(done);
    void done.finally(() => this.admitting.delete(done));
  }

  private dispatch(delivery: Delivery): void {
    if (delivery.malformed !== undefined) {
      this.settings.log.error(
        { jobId: delivery.job.id, queue: delivery.queue, reason: delivery.malformed },
        'malformed job moved to the dead set',
      );
      this.finish(malformedSettlement(delivery, this.settings.nodeName));
      return;
    }
    const epoch = this.epoch;
    const { job } = delivery;
    const keep = resultKeeping(delivery, this.settings.pool.taskOptions(job.task));
    const revoked = this.settings.revoked;
    if (revoked?.(job.id) === true) {
      this.settings.log.info({ jobId: job.id, task: job.task, queue: delivery.queue }, 'job revoked; skipped');
      this.finish(
        revokedSettlement(keep, delivery, this.attempt(undefined, undefined)),
        undefined,
        new RevokedError(job.id),
      );
      return;
    }
    let pid: number | undefined;
    let startedAt: number | undefined;
    let progress: Progress | undefined;
    const entry: Unstarted = { id: job.id, onLeave: undefined, since: performance.now() };
    const leave = (dropped: boolean): void => {
      if (!this.unstarted.delete(entry)) return;
      entry.onLeave?.(dropped);
    };
    const options: ApplyOptions = { id: job.id, queue: delivery.queue, retries: job.attempt };
    if (job.options.timeLimit !== undefined) options.timeLimit = job.options.timeLimit;
    if (job.options.softTimeLimit !== undefined) options.softTimeLimit = job.options.softTimeLimit;
    if (job.scheduledFor !== undefined) options.scheduledFor = job.scheduledFor;
    if (this.badOptions(delivery, options, keep)) return;
    this.jobLog.received(delivery);
    for (const o of this.observers) o.received?.(delivery);
    this.unstarted.add(entry);
    options.onStart = (info) => {
      leave(false);
      pid = info.pid;
      startedAt = info.startedAt;
      for (const o of this.observers) o.started?.(delivery, info.pid, info.startedAt);
      if (keep === 'all' && this.settings.trackStarted) this.progress(delivery, 'STARTED', pid, startedAt);
    };
    options.onProgress = (value, at) => {
      progress = { value, at };
      if (keep === 'all') this.progress(delivery, 'STARTED', pid, startedAt, progress);
      for (const o of this.observers) o.progress?.(delivery, value, at, keep === 'all');
    };
    if (keep === 'all' && this.settings.trackStarted) this.progress(delivery, 'RECEIVED', undefined, undefined);
    const settle = (ok: boolean, outcome: unknown): void => {
      if (!ok && this.poolFailure !== undefined && outcome instanceof WorkerLostError) outcome = this.poolFailure;
      // Revoked while it ran (or waited): whatever ended it, it is not retried nor given back.
      if (!ok && !(outcome instanceof RevokedError) && revoked?.(job.id) === true) outcome = new RevokedError(job.id);
      const task = this.settings.pool.taskOptions(job.task);
      const finishedAt = Date.now();
      const settlement = settlementFor(delivery, ok, outcome, {
        node: this.settings.nodeName,
        pid,
        startedAt,
        finishedAt,
        task,
      });
      // The last progress stays with the job's record (not with a record of the state alone).
      if (progress !== undefined && keep === 'all' && 'result' in settlement && settlement.result !== undefined) {
        settlement.result.progress = progress.value;
        settlement.result.progressAt = progress.at;
      }
      // Taken back by the HoardGuard from a healthy node: no redelivery to count.
      if (settlement.kind === 'giveBack' && this.spread.delete(job.id)) settlement.spread = true;
      // A fenced node's buffered jobs now belong to another node: do not give them back twice.
      if (settlement.kind === 'giveBack' && epoch !== this.epoch) {
        leave(true);
        this.release();
        this.settings.broker.forget?.([delivery]);
        return;
      }
      leave(false);
      const run = { pid, startedAt, finishedAt };
      this.finish(settlement, run, outcome);
      this.jobLog.settled(settlement, outcome, run);
    };
    this.settings.pool.apply(job.task, job.payload, options).then(
      (v) => settle(true, v),
      (e: unknown) => settle(false, e),
    );
  }

  /**
   * The job record's own options (from any producer) that the pool refuses,
   * e.g. a timeLimit past 2^31-1 ms, or a resultTtl the brokers cannot use:
   * every attempt would fail the same way (or lose its result's expiry)
   * before reaching a child, so the job goes to the dead set at once with a
   * FAILURE naming the option. Checked here rather than by the error apply()
   * rejects with, since a task may throw an OptionError of its own (that one
   * is retried as usual). A Redis entry's options were checked when it was
   * read (entry-codec.ts: a bad one is a malformed delivery); this is for a
   * broker whose jobs are not read from outside (memory).
   */
  private badOptions(delivery: Delivery, options: ApplyOptions, keep: ResultKeeping): boolean {
    // Only these come from the record as they are; the rest the Consumer sets itself (hot path: no check without them).
    // A resultTtl matters only to a job whose results are written.
    const resultTtl = keep === 'none' ? undefined : delivery.job.options.resultTtl;
    const { rateLimit } = delivery.job.options;
    if (
      options.timeLimit === undefined &&
      options.softTimeLimit === undefined &&
      resultTtl === undefined &&
      rateLimit === undefined
    )
      return false;
    try {
      if (resultTtl !== undefined && !isResultTtl(resultTtl))
        throw new OptionError('resultTtl', resultTtl, 'whole milliseconds > 0, up to 100 years');
      if (rateLimit !== undefined) checkRateLimit('rateLimit', rateLimit, throwOptionError);
      resolveApplyOptions(options);
      return false;
    } catch (err) {
      if (!(err instanceof OptionError)) throw err;
      const reason = `the job's options cannot be applied: ${messageOf(err)}`;
      this.settings.log.error(
        { jobId: delivery.job.id, task: delivery.job.task, queue: delivery.queue, option: err.option, err },
        `job failed: ${reason}`,
      );
      const attempt = this.attempt(undefined, undefined);
      this.finish(
        withOutcome(
          {
            kind: 'dead',
            delivery,
            reason,
            result: finalRecord(keep, delivery, attempt, 'FAILURE', () => ({ error: serializeError(err) })),
          },
          err,
        ),
      );
      return true;
    }
  }

  /** What the Consumer knows of an attempt that settles now. */
  private attempt(pid: number | undefined, startedAt: number | undefined): Attempt {
    return { node: this.settings.nodeName, pid, startedAt, finishedAt: Date.now(), task: undefined };
  }

  private progress(
    delivery: Delivery,
    state: 'RECEIVED' | 'STARTED',
    pid: number | undefined,
    startedAt: number | undefined,
    progress?: Progress,
  ): void {
    const result = record(
      delivery,
      { node: this.settings.nodeName, pid, startedAt, finishedAt: Date.now(), task: undefined },
      state,
      {},
    );
    delete result.finishedAt;
    delete result.runtime;
    if (progress !== undefined) {
      result.progress = progress.value;
      result.progressAt = progress.at;
    }
    this.acker.push({ kind: 'progress', delivery, result });
  }

  private finish(settlement: Settlement, run?: JobRun, outcome?: unknown): void {
    if (settlement.kind === 'ack') this.counts.succeeded++;
    else if (settlement.kind === 'retry') this.counts.retried++;
    else if (settlement.kind === 'dead') this.counts.dead++;
    else if (settlement.kind === 'giveBack') this.counts.givenBack++;
    // Released first: the Acker sends at once what the last job held leaves behind.
    this.counts.reserved--;
    this.acker.push(settlement);
    this.roomFreed(run?.startedAt !== undefined);
    for (const o of this.observers) o.settled?.(settlement, run, outcome);
  }

  private release(): void {
    this.counts.reserved--;
    this.roomFreed(false);
  }

  /** `ran`: the job ran in a child (a deferred, revoked or malformed one did not: no measure of the children's rate). */
  private roomFreed(ran: boolean): void {
    this.settings.prefetch.settled(this.counts.reserved, ran);
    this.roomWaiter?.();
  }
}

function payloadBytes(deliveries: readonly Delivery[]): number {
  let bytes = 0;
  for (const d of deliveries) bytes += d.job.payload.byteLength;
  return bytes;
}

/** The last progress a job reported, and when the node received it. */
interface Progress {
  value: unknown;
  at: number;
}

/** A job not yet started; onLeave is set by a fencing that waits to count what it dropped. */
interface Unstarted {
  /** The job's id (its ApplyOptions.id in the pool). */
  id: string;
  onLeave: ((dropped: boolean) => void) | undefined;
  /** When it was handed to the pool (performance.now()): the oldest one's wait tells the HoardGuard jobs turned slow. */
  since: number;
}
