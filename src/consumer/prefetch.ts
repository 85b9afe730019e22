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
  /** A job settled; `reserved` jobs are still held. */
  settled(reserved: number): void;
  /** The fetch's reply: `got` of the `asked` jobs, `bytes` of payload in all; `reserved` were held before them. */
  replied(reserved: number, asked: number, got: number, bytes: number): void;
  /** The pool's size (autoscale: its max) changed to `processes` (Celery's _update_consumer_prefetch_count). */
  resize(processes: number): void;
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
  sent(): void {}
  settled(): void {}
  replied(): void {}
  resize(processes: number): void {
    this.limit = this.multiplier * processes;
  }
}

/** The self-sized limit never goes below this many jobs per child (the multiplier Celery and prefork default to). */
export const PREFETCH_FLOOR_PER_PROCESS = 4;
/** Nor above this many per child ... */
export const PREFETCH_MAX_PER_PROCESS = 64;
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
 * above by a count cap and a payload-bytes cap; measured only while the
 * queues have a backlog (a fetch that got all it asked for), so a quiet queue
 * leaves it be. Long jobs finish none during a round trip: the floor.
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

  constructor(private processes: number) {
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

  /** The highest the limit may go now: the count cap, lowered by large payloads (never below the floor). */
  get cap(): number {
    const byBytes = this.jobBytes > 0 ? Math.floor(PREFETCH_MAX_BYTES / this.jobBytes) : Infinity;
    return Math.max(this.floor, Math.min(this.countCap, byBytes));
  }

  sent(reserved: number): void {
    this.onWire = true;
    this.heldAtSend = reserved;
    this.starved = false;
  }

  settled(reserved: number): void {
    // Fewer jobs than children while a fetch is on the wire: a child waits for it.
    if (this.onWire && reserved < this.processes) this.starved = true;
  }

  replied(reserved: number, asked: number, got: number, bytes: number): void {
    this.onWire = false;
    if (got > 0) {
      const mean = bytes / got;
      this.jobBytes = this.jobBytes === 0 ? mean : this.jobBytes + ALPHA * (mean - this.jobBytes);
    }
    // A short reply: the queues, not the limit, decided how much came.
    if (asked === 0 || got < asked) return;
    const finished = Math.max(0, this.heldAtSend - reserved);
    // A starved trip saw only what was there to finish: a lower bound, not a sample.
    if (this.starved || this.perTrip === 0) this.perTrip = Math.max(this.perTrip, finished);
    else this.perTrip += ALPHA * (finished - this.perTrip);
    const want = this.want();
    const next = this.starved ? Math.max(want, 2 * this.limit) : want;
    this.limit = Math.max(this.floor, Math.min(this.cap, next));
  }
}
