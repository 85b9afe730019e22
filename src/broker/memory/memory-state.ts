import { EventLog } from './event-log.js';
import { ExpiryHeap } from './expiry-heap.js';
import type { JobLocation, JobRecord, NewJob } from '../types.js';
import { ControlBoard } from './control-board.js';
import { copyJob } from './job-copy.js';
import { MemoryQueue } from './memory-queue.js';
import { RateBuckets } from './rate-buckets.js';
import { Reservations } from './reservations.js';
import { ResultStore } from './result-store.js';
import { Leadership } from './leadership.js';
import { ScheduleBoard } from './schedule-board.js';
import { WorkWaiters } from './work-waiters.js';
import { MemoryWorkflows } from './workflows.js';

/**
 * Everything one `memory://name` broker holds (the memory twin of one Redis
 * namespace), shared by every handle opened on that name in this process: a
 * Client and a Worker in one process talk through it.
 */
export class MemoryState {
  private readonly queues = new Map<string, MemoryQueue>();
  /** Queues a job was enqueued to or a node registered for (`knownQueues`). */
  readonly known = new Set<string>();
  readonly reservations = new Reservations((name) => this.queue(name));
  readonly results = new ResultStore();
  readonly control = new ControlBoard();
  /** Revoked job id -> epoch ms it was revoked, oldest first (as `{ns}:revoked`). */
  readonly revoked = new Map<string, number>();
  readonly events = new EventLog();
  readonly workflows = new MemoryWorkflows();
  /** Paused queues, as the Redis broker stores them (paused-queues.ts). */
  readonly paused = new Set<string>();
  readonly rates = new RateBuckets();
  readonly schedules = new ScheduleBoard();
  readonly leadership = new Leadership();
  readonly waiters = new WorkWaiters({
    ready: (name, now) => {
      const q = this.queues.get(name);
      return q !== undefined && (q.waiting > 0 || (q.nextDueAt ?? Infinity) <= now);
    },
    nextDueAt: (name) => this.queues.get(name)?.nextDueAt,
  });
  /** Unique locks (JobRecord.uniqueKey): the holding job's id, and until when (epoch ms) with a ttl. */
  private readonly uniqueLocks = new Map<string, { jobId: string; until: number | undefined }>();
  /** Jobs with their own id that ended, until when their result is kept (epoch ms). */
  private readonly endedIds = new Map<string, number>();
  /** endedIds by when each is forgotten: each at its own time, whatever the TTLs. */
  private readonly endedExpiries = new ExpiryHeap<string>();
  /** Open handles; the state is dropped when the last one closes. */
  handles = 0;

  /** The queue named `name`, created empty on first use. */
  queue(name: string): MemoryQueue {
    let q = this.queues.get(name);
    if (q === undefined) {
      q = new MemoryQueue();
      this.queues.set(name, q);
    }
    return q;
  }

  /**
   * Adds a job to its queue (a copy): delayed until its `eta`, or `delay` ms
   * from `now`, when that is still ahead; `touched` gets its queue.
   */
  place(input: NewJob, now: number, touched: Set<string>): void {
    const job = copyJob(input);
    const q = this.queue(job.queue);
    this.known.add(job.queue);
    const dueAt = input.eta ?? (input.delay !== undefined && input.delay > 0 ? now + input.delay : undefined);
    if (dueAt !== undefined && dueAt > now) q.addDelayed({ dueAt, job });
    else q.main.push(job);
    touched.add(job.queue);
  }

  /** Every queue, for a search by job id. */
  allQueues(): IterableIterator<[string, MemoryQueue]> {
    return this.queues.entries();
  }

  /** The queue named `name` if anything ever touched it (read-only paths use this, so they create nothing). */
  peek(name: string): MemoryQueue | undefined {
    return this.queues.get(name);
  }

  /**
   * Whether a job waits, is delayed or is held, for many ids: one scan of
   * every queue, made at the first question (a locate per id, as a workflow
   * of 10,000 members asks, scanned them 10,000 times). The answers are
   * those of that moment: ask again for a new one after a change.
   */
  placedCheck(): (id: string) => boolean {
    let placed: Set<string> | undefined;
    return (id) => {
      if (placed === undefined) {
        placed = new Set(this.reservations.jobIds());
        for (const q of this.queues.values()) {
          for (const list of [q.rd, q.main]) for (const job of list) placed.add(job.id);
          for (const d of q.delayedJobs) placed.add(d.job.id);
        }
      }
      return placed.has(id);
    };
  }

  /**
   * Where the job `id` is, and how to take it out while it waits (a scan of
   * every queue: the memory broker has no index; the Redis one does).
   */
  locate(id: string): { location: JobLocation; remove?: () => JobRecord | undefined } | undefined {
    const held = this.reservations.findJob(id);
    if (held !== undefined) {
      const location = locationOf(held.delivery.job, held.delivery.queue, 'reserved');
      location.nodeId = held.nodeId;
      location.reservedAt = held.reservedAt;
      return { location };
    }
    for (const [name, q] of this.queues) {
      for (const list of [q.rd, q.main]) {
        for (const job of list) {
          if (job.id !== id) continue;
          return {
            location: locationOf(job, name, 'waiting'),
            remove: () => q.remove(id),
          };
        }
      }
      const delayed = q.delayedJobs.find((d) => d.job.id === id);
      if (delayed !== undefined) {
        const location = locationOf(delayed.job, name, 'delayed');
        location.dueAt = delayed.dueAt;
        if (delayed.rateLimited === true) location.rateLimited = true;
        return { location, remove: () => q.remove(id) };
      }
    }
    return undefined;
  }

  /**
   * The id of the job `job` would duplicate (enqueueOnce-n.lua's rules): its
   * own id known (not ended, or ended with its result kept), or its unique
   * key held by a job that has not ended. Undefined: add it.
   */
  duplicateOf(job: NewJob, now: number): string | undefined {
    if (job.ownId === true) {
      if (this.locate(job.id) !== undefined) return job.id;
      if ((this.endedIds.get(job.id) ?? 0) > now) return job.id;
    }
    if (job.uniqueKey !== undefined) {
      const lock = this.uniqueLocks.get(job.uniqueKey);
      if (lock !== undefined && (lock.until ?? Infinity) > now && this.locate(lock.jobId) !== undefined)
        return lock.jobId;
    }
    return undefined;
  }

  /** A job was added: it holds its unique key (until its ttl, when it has one). */
  added(job: NewJob, now: number): void {
    if (job.uniqueKey === undefined) return;
    this.uniqueLocks.set(job.uniqueKey, { jobId: job.id, until: lockedUntil(job, now) });
  }

  /**
   * A dead job put back on its queue takes its unique key again (as
   * changeDead-3.lua does), unless a job that has not ended holds it: else an
   * equal enqueue would add a second job while it waits. Held until it ends,
   * or for its ttl again, as at its enqueue.
   */
  requeued(job: JobRecord, now: number): void {
    if (job.uniqueKey === undefined) return;
    const lock = this.uniqueLocks.get(job.uniqueKey);
    if (lock !== undefined && (lock.until ?? Infinity) > now && this.locate(lock.jobId) !== undefined) return;
    this.uniqueLocks.set(job.uniqueKey, { jobId: job.id, until: lockedUntil(job, now) });
  }

  /** A job ended: its unique key is free; its own id stays known until `resultKeptUntil` (none: its result is not kept). */
  ended(job: JobRecord, resultKeptUntil: number | undefined, now: number): void {
    if (job.uniqueKey !== undefined && this.uniqueLocks.get(job.uniqueKey)?.jobId === job.id)
      this.uniqueLocks.delete(job.uniqueKey);
    if (job.ownId !== true || resultKeptUntil === undefined) return;
    for (const id of this.endedExpiries.takeDue(now)) {
      const until = this.endedIds.get(id);
      if (until === undefined) continue;
      if (until > now) this.endedExpiries.push(until, id);
      else this.endedIds.delete(id);
    }
    const previous = this.endedIds.get(job.id);
    this.endedIds.set(job.id, resultKeptUntil);
    if (previous === undefined || previous > resultKeptUntil) this.endedExpiries.push(resultKeptUntil, job.id);
  }

  /** The earliest due time of the delayed jobs of `queues`. */
  nextDueAt(queues: readonly string[]): number | undefined {
    let next: number | undefined;
    for (const name of queues) {
      const due = this.queues.get(name)?.nextDueAt;
      if (due !== undefined && (next === undefined || due < next)) next = due;
    }
    return next;
  }

  dispose(): void {
    this.results.dispose();
    this.waiters.dispose();
  }
}

function locationOf(job: JobRecord, queue: string, state: JobLocation['state']): JobLocation {
  return {
    id: job.id,
    queue,
    state,
    task: job.task,
    attempt: job.attempt,
    redeliveries: job.redeliveries,
    enqueuedAt: job.enqueuedAt,
  };
}

const registry = new Map<string, MemoryState>();

/** The state for `key`, created on first use; each call is a handle to release. */
export function acquireState(key: string): MemoryState {
  let state = registry.get(key);
  if (state === undefined) {
    state = new MemoryState();
    registry.set(key, state);
  }
  state.handles++;
  return state;
}

/** Releases one handle; the last one drops the state (its jobs, results and timers). */
export function releaseState(key: string, state: MemoryState): void {
  if (--state.handles > 0 || registry.get(key) !== state) return;
  registry.delete(key);
  state.dispose();
}

/** Until when a job added or requeued at `now` holds its unique key: its ttl on, or (undefined) until it ends. */
function lockedUntil(job: JobRecord, now: number): number | undefined {
  return job.uniqueTtl !== undefined && job.uniqueTtl > 0 ? now + job.uniqueTtl : undefined;
}
