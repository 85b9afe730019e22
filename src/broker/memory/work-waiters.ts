import { timerMs } from '../../util/units.js';

/** A blocked `waitForWork` call: `attempt()` tries to reserve jobs (and removes the waiter once it got some). */
export interface WorkWaiter {
  readonly queues: readonly string[];
  attempt(): void;
}

/** What the waiters need to know about the queues. */
export interface QueueView {
  /** Jobs can be taken from `queue` now (waiting, or delayed and due by `now`). */
  ready(queue: string, now: number): boolean;
  /** The due time of the earliest delayed job of `queue`. */
  nextDueAt(queue: string): number | undefined;
}

/**
 * The callers blocked in `waitForWork`, by queue. A change that makes jobs
 * available on a queue wakes its waiters in arrival order until the jobs run
 * out. Delayed jobs are waited for with one timer, set to the earliest due
 * time among the queues somebody waits on, and re-armed only when that time
 * changes (a delayed job became the earliest, a waiter came or went): no
 * polling.
 */
export class WorkWaiters {
  private readonly byQueue = new Map<string, Set<WorkWaiter>>();
  private dueTimer: NodeJS.Timeout | undefined;
  private dueAt: number | undefined;

  constructor(private readonly view: QueueView) {}

  add(waiter: WorkWaiter): void {
    for (const queue of waiter.queues) {
      let set = this.byQueue.get(queue);
      if (set === undefined) {
        set = new Set();
        this.byQueue.set(queue, set);
      }
      set.add(waiter);
    }
    this.rearm();
  }

  remove(waiter: WorkWaiter): void {
    for (const queue of waiter.queues) {
      const set = this.byQueue.get(queue);
      if (set === undefined) continue;
      set.delete(waiter);
      if (set.size === 0) this.byQueue.delete(queue);
    }
    this.rearm();
  }

  /** Jobs may have become available on `queue`: wake its waiters while there are some. */
  notify(queue: string): void {
    const set = this.byQueue.get(queue);
    if (set === undefined) return;
    for (const waiter of [...set]) {
      if (!this.view.ready(queue, Date.now())) break;
      if (set.has(waiter)) waiter.attempt();
    }
  }

  /**
   * After a change to `queues` (jobs added, promoted, given back; delayed
   * jobs added or removed): re-arm the due timer if anybody waits on one of
   * them, then wake their waiters while jobs are there to take.
   */
  changed(queues: Iterable<string>): void {
    const waited = [...queues].filter((queue) => this.byQueue.has(queue));
    if (waited.length === 0) return;
    this.rearm();
    for (const queue of waited) this.notify(queue);
  }

  dispose(): void {
    clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    this.dueAt = undefined;
  }

  /**
   * Only future due times need the timer: a due job is taken by the waiter
   * that `changed()` or `fire()` wakes. One that no waiter could take (its
   * node is fenced) waits for the next change instead of spinning the timer.
   */
  private rearm(): void {
    const now = Date.now();
    let next: number | undefined;
    for (const queue of this.byQueue.keys()) {
      const due = this.view.nextDueAt(queue);
      if (due !== undefined && due > now && (next === undefined || due < next)) next = due;
    }
    if (next === this.dueAt) return;
    clearTimeout(this.dueTimer);
    this.dueTimer = undefined;
    this.dueAt = next;
    if (next === undefined) return;
    // Unref'd: the waiters' own deadlines keep the process alive while anybody waits.
    this.dueTimer = setTimeout(() => this.fire(), timerMs(next - Date.now()));
    this.dueTimer.unref();
  }

  private fire(): void {
    this.dueTimer = undefined;
    this.dueAt = undefined;
    const now = Date.now();
    const due = [...this.byQueue.keys()].filter((queue) => (this.view.nextDueAt(queue) ?? Infinity) <= now);
    for (const queue of due) this.notify(queue);
    this.rearm();
  }
}
