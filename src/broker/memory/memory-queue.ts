import { Fifo } from '../../util/fifo.js';
import type { DeadJob, JobRecord, ListedJob, ListedState } from '../types.js';

/** A delayed job: due at `dueAt` (epoch ms). */
export interface DelayedJob {
  dueAt: number;
  job: JobRecord;
  /** Deferred by a rate limit (the Redis broker's `slot` mark): it waits for its turn, not for a retry. */
  rateLimited?: true;
}

/**
 * One queue of the memory broker, as Redis keeps it: the main list, the
 * redelivered list (`rd`: given back or recovered, served first), delayed
 * jobs in due order, and dead letters. Reserved jobs are not here: they live
 * in the reservations ledger until settled; `reserved` only counts them.
 */
export class MemoryQueue {
  readonly main = new Fifo<JobRecord>();
  readonly rd = new Fifo<JobRecord>();
  /** Sorted by dueAt; equal due times keep their insertion order. */
  private readonly delayed: DelayedJob[] = [];
  /** Oldest first, at most `deadMax`. */
  private readonly dead: DeadJob[] = [];
  reserved = 0;

  get waiting(): number {
    return this.main.length + this.rd.length;
  }

  get delayedCount(): number {
    return this.delayed.length;
  }

  get deadCount(): number {
    return this.dead.length;
  }

  /** The due time of the earliest delayed job, if any. */
  get nextDueAt(): number | undefined {
    return this.delayed[0]?.dueAt;
  }

  /** The delayed jobs, earliest first (read only: `locate` scans them). */
  get delayedJobs(): readonly DelayedJob[] {
    return this.delayed;
  }

  /** The next job to deliver: redelivered ones first. */
  take(): JobRecord | undefined {
    return this.rd.shift() ?? this.main.shift();
  }

  /** Adds a delayed job; returns true when it became the earliest (blocked waiters must re-arm). */
  addDelayed(entry: DelayedJob): boolean {
    let lo = 0;
    let hi = this.delayed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.delayed[mid] as DelayedJob).dueAt <= entry.dueAt) lo = mid + 1;
      else hi = mid;
    }
    this.delayed.splice(lo, 0, entry);
    return lo === 0;
  }

  /**
   * Moves delayed jobs due by `now` to the end of the main list, in due
   * order, and jobs holding their rate-limit turn to the redelivered list
   * (served first: behind a backlog their turn would pass); returns how many.
   */
  promote(now: number): number {
    let n = 0;
    while (n < this.delayed.length && (this.delayed[n] as DelayedJob).dueAt <= now) {
      const { job } = this.delayed[n] as DelayedJob;
      (job.rateSlot === undefined ? this.main : this.rd).push(job);
      n++;
    }
    if (n > 0) this.delayed.splice(0, n);
    return n;
  }

  /** Takes the job `id` out of the waiting or delayed jobs (not a reserved one: its node holds it). */
  remove(id: string): JobRecord | undefined {
    // The first only (an id waits once): one scan each, stopped where it is found, no list copied.
    const waiting = this.rd.removeFirst((j) => j.id === id) ?? this.main.removeFirst((j) => j.id === id);
    if (waiting !== undefined) return waiting;
    const at = this.delayed.findIndex((d) => d.job.id === id);
    return at < 0 ? undefined : this.delayed.splice(at, 1)[0]?.job;
  }

  /** Takes out the delayed jobs that `match` picks, in due order. */
  takeDelayed(match: (entry: DelayedJob) => boolean): DelayedJob[] {
    const out: DelayedJob[] = [];
    const keep: DelayedJob[] = [];
    for (const d of this.delayed) (match(d) ? out : keep).push(d);
    if (out.length > 0) this.delayed.splice(0, this.delayed.length, ...keep);
    return out;
  }

  /** Drops every waiting and delayed job (reserved ones stay with their nodes); returns them. */
  purge(): JobRecord[] {
    const dropped = [...this.rd.drain(), ...this.main.drain(), ...this.delayed.map((d) => d.job)];
    this.delayed.length = 0;
    return dropped;
  }

  /**
   * Up to `limit` jobs of one state from position `from` (waiting: redelivered
   * first, then the main list; delayed: by due time; dead: newest first).
   */
  page(state: ListedState, from: number, limit: number): ListedJob[] {
    const out: ListedJob[] = [];
    for (let i = from; i < from + limit; i++) {
      const item = this.listed(state, i);
      if (item === undefined) break;
      out.push(item);
    }
    return out;
  }

  private listed(state: ListedState, i: number): ListedJob | undefined {
    if (state === 'waiting') {
      const job = i < this.rd.length ? this.rd.at(i) : this.main.at(i - this.rd.length);
      return job && { job };
    }
    if (state === 'delayed') {
      const d = this.delayed[i];
      return d && { job: d.job, dueAt: d.dueAt };
    }
    const d = this.dead[this.dead.length - 1 - i];
    return d && { job: d.job, reason: d.reason, diedAt: d.diedAt };
  }

  bury(entry: DeadJob, deadMax: number): void {
    this.dead.push(entry);
    if (this.dead.length > deadMax) this.dead.splice(0, this.dead.length - deadMax);
  }

  /** The newest `limit` dead jobs, newest first. */
  listDead(limit: number): DeadJob[] {
    if (limit <= 0) return [];
    return this.dead.slice(-limit).reverse();
  }

  /** Takes dead jobs out (`ids` undefined = all), oldest first: those `may` allows, asked of each match in that order. */
  unbury(ids: readonly string[] | undefined, may: (d: DeadJob) => boolean = () => true): DeadJob[] {
    const wanted = ids === undefined ? undefined : new Set(ids);
    const out: DeadJob[] = [];
    const keep: DeadJob[] = [];
    for (const d of this.dead) ((wanted === undefined || wanted.has(d.job.id)) && may(d) ? out : keep).push(d);
    this.dead.splice(0, this.dead.length, ...keep);
    return out;
  }
}
