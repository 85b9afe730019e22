import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { BrokerMembership, ControlRequest, LeaderLease } from '../broker/types.js';
import { BrokerRefusedError, messageOf } from '../errors.js';
import type { BrokerFailure } from '../observe/node-health.js';
import { retryDelay } from '../util/backoff.js';

/**
 * Beats per lease. Two: a beat's four Redis commands every 10 s of a 20 s
 * lease keep an idle node under half a command per second (B6). A failed
 * beat is tried again within a second or two (BEAT_RETRY), so the lease
 * still survives one with time to spare; detection of a dead node does not
 * depend on this (one lease after its last beat, see nextExpiryAt).
 */
const BEATS_PER_LEASE = 2;
const MIN_INTERVAL_MS = 250;
/** After a failed beat: 1 s doubling, never past the interval (a broker that stays away is not hammered). */
const BEAT_RETRY_MS = 1_000;
/** A dead node is looked for this long after its lease deadline (the deadline is exclusive; clocks round). */
const EXPIRY_SLACK_MS = 20;
/**
 * How late a beat's reply may be, past the interval, before the broker is
 * taken for silent (readiness): a reply takes milliseconds, and a node's
 * calls have no timeout, so a frozen Redis fails none of them. At most a
 * quarter of the lease (half an interval), so the silence shows before the
 * lease runs out.
 */
const ANSWER_SLACK_MS = 2_000;

/** How often a node renews a lease of `leaseMs`. */
export function heartbeatInterval(leaseMs: number): number {
  return Math.max(MIN_INTERVAL_MS, Math.floor(leaseMs / BEATS_PER_LEASE));
}

export interface HeartbeatHooks {
  nodeId(): string;
  queues(): readonly string[];
  /** The lease is gone: another node owns this node's jobs now. */
  onFenced(): Promise<void>;
  /** The earliest due time of a delayed job on this node's queues. */
  onDue(at: number | undefined): void;
  /** Control requests that were waiting for this node. */
  onControl?(requests: ControlRequest[]): void;
  /** A beat renewed the lease after leaseHeld() had found it unconfirmed: what waited on it may go on. */
  onRenewed?(): void;
  /**
   * A beat renewed the lease (every such beat): a retry of what a failed call after a fencing left undone.
   * `missed`: requests were posted to this node since its last beat, or its lease had lapsed: some may never have reached it.
   */
  onBeat?(missed: boolean): void;
  /** A beat's call came back (ms from send to reply): the broker's round trip, as metrics show it. */
  onRoundTrip?(ms: number): void;
  /** True when this node stands for leader (it has singleton duties): its beats renew or take the leader lease. */
  lead?(): boolean;
  /** Who holds the leader lease, as a beat that stood for it learned. */
  onLeader?(lease: LeaderLease): void;
}

/**
 * Renews this node's lease every `interval` and does the cluster's
 * housekeeping that rides on it: a node whose lease expired is recovered
 * here — its reserved jobs go back to their queues (pyspider's ZooKeeper
 * ephemeral nodes, as Redis leases) — and control requests are taken.
 * Recovery does not wait for a regular beat (docs/architecture.md, "A
 * worker node"). Beats are sequential: a slow Redis never piles them up.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private running = false;
  private failures = 0;
  /** What the last failed beat failed with, while beats fail (the readiness probe says it). */
  private lastFailure: BrokerFailure | undefined;
  /** Delay before the next beat, set by the last one. */
  private next: number;
  /**
   * Until when (performance.now()) this node surely holds its lease: the
   * send time of the last renewal (or registration) plus the lease. Redis
   * set the deadline later than that send time, so the lease cannot have
   * expired before this, whatever happened to this process meanwhile.
   */
  private leaseUntil = -Infinity;
  /** Set while a beat was asked for because leaseHeld() found the lease unconfirmed. */
  private confirming = false;
  /** When (performance.now()) the last beat ended, or the heartbeat started. */
  private lastEnded = -Infinity;
  /** When (performance.now()) the broker last answered a beat or a registration. */
  private lastAnswered = -Infinity;
  /** Set when beatSoon() was called during a beat: the next one goes at once. */
  private again = false;

  constructor(
    private readonly broker: BrokerMembership,
    private readonly interval: number,
    private readonly maxRedeliveries: number,
    private readonly hooks: HeartbeatHooks,
    private readonly log: Logger,
  ) {
    this.next = interval;
  }

  start(): void {
    this.running = true;
    this.lastEnded = performance.now();
    this.lastAnswered = Math.max(this.lastAnswered, this.lastEnded);
    this.schedule();
  }

  /** The lease was renewed by a registration (or a beat) sent at `sentAt` (performance.now()). */
  renewed(sentAt: number): void {
    this.lastAnswered = performance.now();
    this.leaseUntil = Math.max(this.leaseUntil, sentAt + this.broker.leaseMs);
    if (!this.confirming || performance.now() >= this.leaseUntil) return;
    this.confirming = false;
    this.hooks.onRenewed?.();
  }

  /**
   * True while this node surely holds its lease. False after a stall longer
   * than the lease (the process was paused, the host overloaded) or while
   * Redis is away: another node may have recovered the jobs this node holds.
   * Then a beat goes out at once; onRenewed() tells when the lease is
   * confirmed (a fenced node re-registers and is renewed that way).
   */
  leaseHeld(): boolean {
    if (performance.now() < this.leaseUntil) return true;
    if (!this.confirming && this.running) {
      this.confirming = true;
      if (this.beating === undefined) {
        clearTimeout(this.timer);
        this.next = 0;
        this.schedule();
      }
    }
    return false;
  }

  /** Sends a beat now, or right after the one under way (e.g. the leader lease was released). */
  beatSoon(): void {
    if (!this.running) return;
    if (this.beating !== undefined) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.next = 0;
    this.schedule();
  }

  /**
   * Forgets the confirmed lease, as if it had run out. For tests: a real lapse needs the node stalled past its lease.
   * @internal
   */
  forgetLease(): void {
    this.leaseUntil = -Infinity;
  }

  /** How long since the last confirmed renewal's lease ran out (ms; 0 while it holds). */
  lapsedFor(): number {
    return Math.max(0, performance.now() - this.leaseUntil);
  }

  /**
   * How long the broker may leave the beats unanswered before it is taken
   * for silent: the interval plus ANSWER_SLACK_MS, or half an interval if
   * shorter (ms).
   */
  get answerBoundMs(): number {
    return this.interval + Math.min(ANSWER_SLACK_MS, this.interval / 2);
  }

  /**
   * The heartbeat's health: `stuckForMs` > 0 when no beat has ended for
   * longer than the interval plus a lease (a call to the broker that never
   * came back); `silentForMs`, how long since the broker last answered, once
   * that is longer than answerBoundMs (else 0: a Redis that is frozen fails
   * no call, its replies just never come); `failures` counts the beats that
   * failed in a row; `endedAgoMs`, since the last beat ended (answered or failed).
   */
  health(): {
    running: boolean;
    stuckForMs: number;
    endedAgoMs: number;
    silentForMs: number;
    failures: number;
    lastFailure: BrokerFailure | undefined;
  } {
    const now = performance.now();
    const overdue = now - this.lastEnded - this.interval - this.broker.leaseMs;
    const silent = now - this.lastAnswered;
    return {
      running: this.running,
      stuckForMs: this.running ? Math.max(0, overdue) : 0,
      endedAgoMs: now - this.lastEnded,
      silentForMs: this.running && silent > this.answerBoundMs ? silent : 0,
      failures: this.failures,
      lastFailure: this.lastFailure,
    };
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.beating;
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.beating = this.beat().finally(() => {
        this.lastEnded = performance.now();
        this.beating = undefined;
        if (this.again) this.next = 0;
        this.again = false;
        this.schedule();
      });
    }, this.next);
  }

  /**
   * Gives the jobs of node `dead`, whose lease expired, back to their
   * queues. A failure is the recovery's, not the beat's (that one was
   * answered): logged as such; a later beat, of this node or another, is
   * told of the node again (still expired, or its recovery claim lapsed).
   */
  private async recover(dead: string, me: string): Promise<void> {
    try {
      const moved = await this.broker.recover(dead, me, this.maxRedeliveries);
      // Nothing moved is no news: the node may have renewed its lease meanwhile (it stalled, or Redis did).
      if (moved > 0)
        this.log.warn({ deadNode: dead, jobs: moved }, `recovered the jobs of node ${dead}, whose lease expired`);
      else
        this.log.debug(
          { deadNode: dead },
          `node ${dead}'s lease had run out: nothing to recover (it held nothing, another node recovered it, or it renewed its lease in time)`,
        );
    } catch (err) {
      this.log[this.running ? 'warn' : 'debug'](
        { err, deadNode: dead },
        `could not recover the jobs of node ${dead}, whose lease expired: ${messageOf(err)}; a later heartbeat tries again`,
      );
    }
  }

  /** One beat; public so a test or a control command can force one. */
  async beat(): Promise<void> {
    const me = this.hooks.nodeId();
    this.next = this.interval;
    try {
      const sentAt = performance.now();
      // Only a node that stands for leader names it: the others' beats stay as they were.
      const reply =
        this.hooks.lead?.() === true
          ? await this.broker.heartbeat(me, this.hooks.queues(), true)
          : await this.broker.heartbeat(me, this.hooks.queues());
      this.lastAnswered = performance.now();
      this.hooks.onRoundTrip?.(this.lastAnswered - sentAt);
      if (this.failures > 0) this.log.info({ failures: this.failures }, 'heartbeats are reaching the broker again');
      this.failures = 0;
      this.lastFailure = undefined;
      if (reply.fenced) {
        await this.hooks.onFenced();
        return;
      }
      if (reply.lapsedMs !== undefined)
        this.log.warn(
          { lapsedMs: reply.lapsedMs },
          `this node's lease had run out ${reply.lapsedMs} ms ago by the broker's clock (this process stalled, or the broker was stopped or unreachable), but no node had taken its jobs: renewed, nothing it holds runs twice`,
        );
      this.renewed(sentAt);
      // A lapsed lease: requests sent meanwhile went nowhere (the node was not live), as if they lapsed.
      this.hooks.onBeat?.(reply.controlPosted === true || reply.lapsedMs !== undefined);
      if (reply.control !== undefined && reply.control.length > 0) this.hooks.onControl?.(reply.control);
      if (reply.leader !== undefined) this.hooks.onLeader?.(reply.leader);
      this.hooks.onDue(reply.nextDueAt);
      for (const dead of reply.expired) await this.recover(dead, me);
      if (reply.nextExpiryAt !== undefined) {
        this.next = Math.max(
          MIN_INTERVAL_MS / 5,
          Math.min(this.interval, reply.nextExpiryAt - Date.now() + EXPIRY_SLACK_MS),
        );
      }
      // This beat left before the stall and confirmed nothing: the next one goes now.
      if (this.confirming) this.next = 0;
    } catch (err) {
      this.next = retryDelay(this.failures, { delay: Math.min(BEAT_RETRY_MS, this.interval), cap: this.interval });
      this.failures++;
      const refused = err instanceof BrokerRefusedError;
      this.lastFailure = { message: messageOf(err), refused };
      // Stopped meanwhile (a stop that gave up waiting for this beat closed the broker): no later beat comes.
      this.log[this.running ? 'warn' : 'debug'](
        { err, failures: this.failures },
        refused
          ? `heartbeat refused by the broker: ${messageOf(err)}; the lease expires unless a later one succeeds`
          : 'heartbeat failed; the lease expires unless a later one succeeds',
      );
    }
  }
}
