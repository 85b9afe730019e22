import type { JobMeta } from '../protocol/messages.js';

/** A job's arguments: an array, or a msgpack-encoded array passed through to the child untouched. */
export type JobArgs = unknown[] | Uint8Array;

/** Per-job options of `Pool.apply`. */
export interface ApplyOptions {
  /** The job's id as the task sees it in currentTask() (default: the pool's sequence number). */
  id?: string;
  /** The queue the job came from, for currentTask(). */
  queue?: string;
  /** Retries already spent, for currentTask(). */
  retries?: number;
  /** Override the pool's hard time limit for this job (ms, or a string like "5s"). */
  timeLimit?: number | string;
  /** Override the pool's soft time limit for this job (ms, or a string like "5s"). */
  softTimeLimit?: number | string;
  /** Called when a child starts the job (its ACK arrived). */
  onStart?: (info: { pid: number; startedAt: number }) => void;
}

/** ApplyOptions after validation: time limits in ms. */
export type ResolvedApplyOptions = Omit<ApplyOptions, 'timeLimit' | 'softTimeLimit'> & {
  timeLimit?: number;
  softTimeLimit?: number;
};

/** The parent's record of one applied job, from apply() until it settles. */
export class PoolJob {
  /** 0 until a child ACKs it; then the epoch ms it started. */
  startedAt = 0;
  /** Times it went back to the outbound buffer unstarted because its child died. */
  requeues = 0;
  settled = false;
  /** withdraw() asked for it back: if it comes back unstarted it is rejected with JobWithdrawnError, not run elsewhere. */
  withdrawing = false;

  constructor(
    readonly seq: number,
    readonly name: string,
    readonly args: JobArgs,
    readonly meta: JobMeta | null,
    readonly options: ResolvedApplyOptions | undefined,
    readonly resolve: (value: unknown) => void,
    readonly reject: (err: Error) => void,
  ) {}

  get id(): string {
    return this.meta?.id ?? String(this.seq);
  }
}

/** An array-backed FIFO that does not shift on every take (200,000 queued jobs must stay cheap). */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** Puts items back at the front, keeping their order. */
  unshiftAll(items: readonly T[]): void {
    if (items.length === 0) return;
    this.items = [...items, ...this.items.slice(this.head)];
    this.head = 0;
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Takes out the items `take` accepts, wherever they are, keeping the order of the rest; returns them in order. O(n): not for the hot path. */
  removeWhere(take: (item: T) => boolean): T[] {
    const kept: T[] = [];
    const taken: T[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as T;
      (take(item) ? taken : kept).push(item);
    }
    if (taken.length > 0) {
      this.items = kept;
      this.head = 0;
    }
    return taken;
  }

  /** Empties the FIFO and returns what it held, in order. */
  drain(): T[] {
    const out = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return out;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i] as T;
  }
}
