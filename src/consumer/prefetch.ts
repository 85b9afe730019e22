/**
 * How many jobs a node holds at once (buffered + running): a fixed limit
 * (`prefetchMultiplier` given), or one sized from what the node measures
 * (the default; the rule is in docs/architecture.md, "Prefetch").
 */
export interface Prefetch {
  /** The most jobs to hold now. */
  readonly limit: number;
  /** A fetch goes out while `reserved` jobs are held. */
  sent(reserved: number): void;
  /** A job settled; `reserved` jobs are still held; `ran`: a child ran it (only those measure the children's rate). */
  settled(reserved: number, ran: boolean): void;
  /** The fetch's reply: `got` of the `asked` jobs, `bytes` of payload in all; `reserved` were held before them. */
  replied(reserved: number, asked: number, got: number, bytes: number): void;
  /** The pool's size (autoscale: its max) changed to `processes` (Celery's _update_consumer_prefetch_count). */
  resize(processes: number): void;
  /** Jobs held past this many may be given back (excess()); Infinity: never. */
  readonly giveBackAbove: number;
  /** How many of the `reserved` jobs held to give back to their queues now, when the oldest not started has waited `oldestWaitMs`. */
  excess(reserved: number, oldestWaitMs: number): number;
  /** Jobs were given back (excess()): what let the node hold them is measured afresh. */
  gaveBack(): void;
}

/** `prefetchMultiplier × processes`, as given; it follows the pool's size. */
export class FixedPrefetch implements Prefetch {
  limit: number;

  constructor(
    private readonly multiplier: number,
    processes: number,
  ) {
    this.limit = multiplier * processes;
  }
  readonly giveBackAbove = Infinity;
  sent(): void {}
  settled(): void {}
  replied(): void {}
  resize(processes: number): void {
    this.limit = this.multiplier * processes;
  }
  excess(): number {
    return 0;
  }
  gaveBack(): void {}
}

/** The self-sized limit never goes below this many jobs per child (the multiplier Celery and prefork default to). */
export const PREFETCH_FLOOR_PER_PROCESS = 4;
/** Nor above this many per child (unless PREFETCH_WORK_MS allows more) ... */
export const PREFETCH_MAX_PER_PROCESS = 64;
/**
 * ... except, with `fair` (the jobs held wait in the parent), for jobs so
 * quick that the children finish more than that in this long, at the rate
 * measured: the node may then hold as many as they finish in it. So little
 * work keeps no other node waiting, and a node of quick jobs (tens of
 * thousands a second) held to 64 per child ran dry while its fetch was on
 * the wire (B1: about a sixth of the time) ...
 */
export const PREFETCH_WORK_MS = 25;
/**
 * Jobs held past the count cap thanks to PREFETCH_WORK_MS go back to their
 * queues, for other nodes, once the oldest job held and not started has
 * waited this long (ten times what the allowance promised): the jobs turned
 * slow, and the rate it was sized by is measured afresh.
 */
export const PREFETCH_GIVE_BACK_MS = 250;
/** ... nor above this many per node ... */
export const PREFETCH_MAX = 1024;
/** ... nor above what keeps the payloads held near this many bytes (by the mean payload size seen). */
export const PREFETCH_MAX_BYTES = 32 * 1024 * 1024;
/** Weight of the newest sample in the moving averages. */
const ALPHA = 0.25;
/**
 * Fetch round trips' worth of jobs half the limit holds beyond the running
 * ones: so a fetch goes out about once per this many round trips of work,
 * and its fixed cost (a script, its round trip) is spread over as many jobs.
 */
export const PREFETCH_TRIPS = 16;

/**
 * Keeps enough jobs on hand to cover the fetch round trip at the rate the
 * children finish them: it measures how many jobs finish while a fetch is on
 * the wire (a moving average), and since the next fetch goes out when half
 * the limit is free, sizes the limit so that half of it covers the running
 * jobs plus PREFETCH_TRIPS round trips of those. A round trip during which a
 * child ran out of jobs doubles it at once. Bounded below by 4 per child and
 * above by a count cap (64 per child, or PREFETCH_WORK_MS of work at the
 * rate the jobs finish if that is more) and a payload-bytes cap; measured
 * only while the queues have a backlog (a fetch that got all it asked for),
 * so a quiet queue leaves it be. Long jobs finish none during a round trip:
 * the floor.
 */
export class AdaptivePrefetch implements Prefetch {
  limit: number;
  private floor = 0;
  private countCap = 0;
  private onWire = false;
  private heldAtSend = 0;
  private starved = false;
  /** Moving average of the jobs that finish during one fetch round trip. */
  private perTrip = 0;
  /** Moving average of a job's payload bytes (0: none seen yet). */
  private jobBytes = 0;
  /** Moving averages of the jobs that finish from one reply to the next, and of the ms between them (0: not measured yet). */
  private finishedPerReply = 0;
  private msPerReply = 0;
  /** Jobs settled since the last reply. */
  private finishedSinceReply = 0;
  /** When the last reply came (undefined: none yet, or it was short: the queues went quiet). */
  private lastReplyAt: number | undefined;
  /** A fetch asked for room past giveBackAbove since the last give-back: only then may jobs be given back. */
  private allowanceUsed = false;

  private readonly quickAllowance: boolean;
  private readonly now: () => number;

  constructor(
    private processes: number,
    options: {
      /**
       * Let quick jobs be held past the count cap (PREFETCH_WORK_MS): only
       * where the jobs held wait in the parent, to be given back if they
       * turn slow (fair); fcfs writes them into the children's pipes.
       */
      quickAllowance?: boolean;
      /** The clock rates are measured with (ms). */
      now?: () => number;
    } = {},
  ) {
    this.quickAllowance = options.quickAllowance ?? true;
    this.now = options.now ?? (() => performance.now());
    this.bound(processes);
    this.limit = this.floor;
  }

  /** The bounds follow the pool, and the limit is worked out again from what was measured per round trip. */
  resize(processes: number): void {
    this.bound(processes);
    this.limit = Math.max(this.floor, Math.min(this.cap, this.want()));
  }

  /** Half the limit covers the running jobs plus PREFETCH_TRIPS round trips of those that finish. */
  private want(): number {
    return 2 * (this.processes + Math.ceil(PREFETCH_TRIPS * this.perTrip));
  }

  private bound(processes: number): void {
    this.processes = processes;
    this.floor = PREFETCH_FLOOR_PER_PROCESS * processes;
    this.countCap = Math.max(this.floor, Math.min(PREFETCH_MAX, PREFETCH_MAX_PER_PROCESS * processes));
  }

  /** The highest the limit may go now: the count cap (or PREFETCH_WORK_MS of quick jobs), lowered by large payloads (never below the floor). */
  get cap(): number {
    const perMs = this.quickAllowance && this.msPerReply > 0 ? this.finishedPerReply / this.msPerReply : 0;
    const byWork = Math.min(PREFETCH_MAX, Math.floor(perMs * PREFETCH_WORK_MS));
    return Math.max(this.floor, Math.min(Math.max(this.countCap, byWork), this.byBytes()));
  }

  /** The cap without PREFETCH_WORK_MS's allowance: what a node of slow jobs may hold (without the allowance, nothing is given back). */
  get giveBackAbove(): number {
    return this.quickAllowance ? Math.max(this.floor, Math.min(this.countCap, this.byBytes())) : Infinity;
  }

  private byBytes(): number {
    return this.jobBytes > 0 ? Math.floor(PREFETCH_MAX_BYTES / this.jobBytes) : Infinity;
  }

  /**
   * The jobs held past giveBackAbove, once the oldest not started has waited
   * PREFETCH_GIVE_BACK_MS: the quick jobs the allowance was sized by turned
   * slow. None unless a fetch used the allowance: a line lowered by larger
   * payloads or a smaller pool gives back nothing a fetch took under it.
   */
  excess(reserved: number, oldestWaitMs: number): number {
    const keep = this.giveBackAbove;
    if (!this.allowanceUsed || reserved <= keep || oldestWaitMs < PREFETCH_GIVE_BACK_MS) return 0;
    return reserved - keep;
  }

  /** The allowance starts over from a new measurement, and the limit falls back to the count cap until then. */
  gaveBack(): void {
    this.finishedPerReply = 0;
    this.msPerReply = 0;
    this.lastReplyAt = undefined;
    this.finishedSinceReply = 0;
    this.allowanceUsed = false;
    this.limit = Math.min(this.limit, this.giveBackAbove);
  }

  sent(reserved: number): void {
    if (this.limit > this.giveBackAbove) this.allowanceUsed = true;
    this.onWire = true;
    this.heldAtSend = reserved;
    this.starved = false;
  }

  settled(reserved: number, ran: boolean): void {
    if (ran) this.finishedSinceReply++;
    // Fewer jobs than children while a fetch is on the wire: a child waits for it.
    if (this.onWire && reserved < this.processes) this.starved = true;
  }

  replied(reserved: number, asked: number, got: number, bytes: number): void {
    this.onWire = false;
    if (got > 0) {
      const mean = bytes / got;
      this.jobBytes = this.jobBytes === 0 ? mean : this.jobBytes + ALPHA * (mean - this.jobBytes);
    }
    // A short reply: the queues, not the limit, decided how much came (and the rate till the next one is theirs too).
    if (asked === 0 || got < asked) {
      this.lastReplyAt = undefined;
      return;
    }
    this.measureRate();
    const finished = Math.max(0, this.heldAtSend - reserved);
    // A starved trip saw only what was there to finish: a lower bound, not a sample.
    if (this.starved || this.perTrip === 0) this.perTrip = Math.max(this.perTrip, finished);
    else this.perTrip += ALPHA * (finished - this.perTrip);
    const want = this.want();
    const next = this.starved ? Math.max(want, 2 * this.limit) : want;
    this.limit = Math.max(this.floor, Math.min(this.cap, next));
  }

  /** Measures the jobs that finished, and the time, since the last reply that brought all it asked for. */
  private measureRate(): void {
    const now = this.now();
    const since = this.lastReplyAt;
    this.lastReplyAt = now;
    const finished = this.finishedSinceReply;
    this.finishedSinceReply = 0;
    if (since === undefined || now <= since) return;
    // Averaged apart, not as a ratio per reply: a burst of finishes in a short gap would read as a rate far above the real one.
    const ms = now - since;
    if (this.msPerReply === 0) {
      this.finishedPerReply = finished;
      this.msPerReply = ms;
      return;
    }
    this.finishedPerReply += ALPHA * (finished - this.finishedPerReply);
    this.msPerReply += ALPHA * (ms - this.msPerReply);
  }
}
