import { Fifo } from '../../pool/job.js';
import type { DeadJob, Delivery, JobRecord, NodeInfo, ResultRecord } from '../types.js';

/** A delayed job: due at `dueAt` (epoch ms). */
export interface DelayedJob {
  dueAt: number;
  job: JobRecord;
}

/** One queue: waiting jobs (given-back ones served first), delayed jobs in due order, dead letters. */
export class MemoryQueue {
  readonly main = new Fifo<JobRecord>();
  /** Given back or recovered: served before `main`. */
  readonly rd = new Fifo<JobRecord>();
  /** Sorted by dueAt, then by insertion. */
  readonly delayed: DelayedJob[] = [];
  /** Oldest first. */
  readonly dead: DeadJob[] = [];
  reserved = 0;

  get waiting(): number {
    return this.main.length + this.rd.length;
  }

  take(): JobRecord | undefined {
    return this.rd.shift() ?? this.main.shift();
  }

  addDelayed(entry: DelayedJob): void {
    // Binary search for the first entry due later: equal due times keep their order.
    let lo = 0;
    let hi = this.delayed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.delayed[mid] as DelayedJob).dueAt <= entry.dueAt) lo = mid + 1;
      else hi = mid;
    }
    this.delayed.splice(lo, 0, entry);
  }

  /** Moves delayed jobs due by `now` to the waiting list; returns how many. */
  promote(now: number): number {
    let n = 0;
    while (this.delayed.length > 0 && (this.delayed[0] as DelayedJob).dueAt <= now) {
      this.main.push((this.delayed.shift() as DelayedJob).job);
      n++;
    }
    return n;
  }

  get nextDueAt(): number | undefined {
    return this.delayed[0]?.dueAt;
  }
}

export interface MemoryNode {
  info: NodeInfo;
  leaseUntil: number;
  /** Receipts this node holds. */
  reserved: Set<string>;
}

export interface Reservation {
  nodeId: string;
  delivery: Delivery;
}

interface StoredResult {
  record: ResultRecord;
  expiresAt: number;
}

/**
 * Everything one `memory://name` broker holds, shared by every handle opened
 * on that name in this process (a Client and a Worker talk through it).
 */
export class MemoryState {
  readonly queues = new Map<string, MemoryQueue>();
  readonly nodes = new Map<string, MemoryNode>();
  readonly reservations = new Map<string, Reservation>();
  readonly replies = new Map<string, string[]>();
  private readonly results = new Map<string, StoredResult>();
  private receiptSeq = 0;
  private writesSinceSweep = 0;
  /** Callbacks of blocked waits, called on any change that could end them. */
  private readonly wakers = new Set<() => void>();
  handles = 0;

  queue(name: string): MemoryQueue {
    let q = this.queues.get(name);
    if (q === undefined) {
      q = new MemoryQueue();
      this.queues.set(name, q);
    }
    return q;
  }

  nextReceipt(): string {
    return String(++this.receiptSeq);
  }

  setResult(record: ResultRecord, ttl: number, now: number): void {
    this.results.set(record.id, { record: structuredClone(record), expiresAt: now + ttl });
    // Expired results go lazily on read, and in a sweep every so many writes, so the map stays bounded without a timer.
    if (++this.writesSinceSweep >= 1_000) {
      this.writesSinceSweep = 0;
      for (const [id, r] of this.results) if (r.expiresAt <= now) this.results.delete(id);
    }
  }

  getResult(id: string, now: number): ResultRecord | undefined {
    const r = this.results.get(id);
    if (r === undefined) return undefined;
    if (r.expiresAt <= now) {
      this.results.delete(id);
      return undefined;
    }
    return structuredClone(r.record);
  }

  onChange(waker: () => void): () => void {
    this.wakers.add(waker);
    return () => this.wakers.delete(waker);
  }

  changed(): void {
    for (const wake of [...this.wakers]) wake();
  }
}
