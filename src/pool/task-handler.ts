import { ArgumentSerializationError } from '../errors.js';
import { FrameBatch } from '../protocol/frame-encoder.js';
import { MessageType } from '../protocol/messages.js';
import type { SchedulingStrategy } from '../scheduling/index.js';
import { Fifo } from '../util/fifo.js';
import type { PoolJob } from './job.js';
import { Lookahead } from './lookahead.js';
import type { WorkerProcess } from './worker-process.js';

export interface TaskHandlerHooks {
  /** The current children, in a stable order. */
  children(): readonly WorkerProcess[];
  /** A child reached maxTasksPerChild with this write: it must be retired and replaced. */
  onQuota(proc: WorkerProcess): void;
  /** A job that cannot be sent at all (its arguments do not encode). */
  onUnsendable(job: PoolJob, err: Error): void;
  /** The job's hard limit in ms, sent with it for the child's watchdog. */
  hardLimit(job: PoolJob): number | undefined;
  /** False while no job may be written to any child (Pool.setDispatchGate). */
  mayDispatch(): boolean;
  /** Jobs were written to a child that held none: the first is its new head. */
  onNewHead(proc: WorkerProcess): void;
  /** The child's claim pipe failed: the jobs just given it were not written, and it must be replaced. */
  onClaimsFailed(proc: WorkerProcess, err: Error): void;
}

/**
 * Parent → child: holds the outbound buffer and moves jobs into the children's
 * pipes as the strategy allows, many frames per write, honouring backpressure.
 * Flushes are coalesced into one microtask, so a burst of apply() calls costs
 * one pass.
 */
export class TaskHandler {
  readonly outbound = new Fifo<PoolJob>();
  private scheduled = false;
  private cursor = 0;
  /** Children the strategy let take jobs at the start of this pass (offer shares the buffer among them). */
  private takers = 0;
  /** The buffer at the start of this pass divided among the takers: the most one offer takes of a buffer that fits in it. */
  private share = 0;
  private paused = false;
  /** Reused for every write: take() empties it. */
  private readonly batch: FrameBatch;
  /** Takes back jobs written ahead (fair with claim pipes). */
  private readonly lookahead: Lookahead | undefined;

  constructor(
    private readonly strategy: SchedulingStrategy,
    private readonly maxTasksPerChild: number | undefined,
    private readonly maxFrameSize: number,
    private readonly hooks: TaskHandlerHooks,
  ) {
    this.batch = new FrameBatch(maxFrameSize);
    if (strategy.takesBack) {
      this.lookahead = new Lookahead({
        children: () => this.hooks.children(),
        giveBack: (jobs) => this.giveBack(jobs),
        mayDispatch: () => !this.paused && this.hooks.mayDispatch(),
        meanRunMs: () => this.strategy.meanRunMs,
        recheck: () => this.schedule(),
      });
    }
  }

  /**
   * A job of `proc` settled; it started at `startedAt` (epoch ms, 0 if not
   * known). Its time, as the parent sees it, runs from the write (the child
   * was idle) or the previous job's result to now: fair sizes what a child
   * holds from it. Measured here, not in the child: a child's clock does not
   * see a job wait in its pipe.
   */
  settled(proc: WorkerProcess, startedAt: number): void {
    const now = performance.now();
    this.strategy.ran(now - proc.freeAt);
    proc.freeAt = now;
    // The next job starts after this one did, however late the parent reads the RESULT.
    if (startedAt > proc.headStartFloor) proc.headStartFloor = startedAt;
  }

  submit(job: PoolJob): void {
    this.outbound.push(job);
    this.schedule();
  }

  /** Jobs a child never started go back ahead of every job applied after them: the buffer stays in the order jobs were applied. */
  giveBack(jobs: readonly PoolJob[]): void {
    this.outbound.putBack(jobs, bySeq);
    this.schedule();
  }

  /** Stop moving jobs (terminate); the buffer is then drained by the pool. */
  pause(): void {
    this.paused = true;
    this.lookahead?.stop();
  }

  schedule(): void {
    if (this.scheduled || this.paused) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /**
   * One pass. Idle children first, lowest index first: with one job in flight
   * it keeps landing on the same warm child (its pages and the scheduler's
   * placement stay hot), while a burst still reaches every idle child. Then
   * round-robin over everyone the strategy lets take more, until nobody does.
   */
  flush(): void {
    if (this.paused || !this.hooks.mayDispatch()) return;
    this.pass();
    if (this.lookahead === undefined || this.outbound.length > 0) return;
    // Nothing buffered: a child left idle runs jobs that others hold ahead.
    const idle = this.idleChildren();
    if (idle === 0) return;
    const jobs = this.lookahead.forIdle(idle);
    if (jobs.length === 0) return;
    this.outbound.putBack(jobs, bySeq);
    this.pass();
  }

  private idleChildren(): number {
    let idle = 0;
    for (const proc of this.hooks.children())
      if (proc.inFlight.length === 0 && this.strategy.capacity(proc) > 0) idle++;
    return idle;
  }

  private pass(): void {
    if (this.outbound.length === 0) return;
    const children = this.hooks.children();
    const n = children.length;
    this.takers = 0;
    for (const proc of children) if (this.strategy.capacity(proc) > 0) this.takers++;
    this.share = Math.ceil(this.outbound.length / Math.max(1, this.takers));
    for (let i = 0; i < n && this.outbound.length > 0; i++) {
      const proc = children[i] as WorkerProcess;
      if (proc.inFlight.length === 0) this.offer(proc);
    }
    let progressed = true;
    while (this.outbound.length > 0 && progressed && n > 0) {
      progressed = false;
      for (let i = 0; i < n && this.outbound.length > 0; i++) {
        if (this.offer(children[(this.cursor + i) % n] as WorkerProcess)) progressed = true;
      }
      this.cursor = (this.cursor + 1) % n;
    }
  }

  /**
   * Hands `proc` as many jobs as the strategy and maxTasksPerChild allow;
   * true if it took any. The buffer is shared out evenly among the children
   * that can take. One larger than an offer: each offer takes its part of
   * what is left, so the end of a burst leaves no child a batch behind the
   * others (fcfs: up to FCFS_BATCH - 1 jobs run by one child alone). One
   * that fits in an offer (a batch fetched from a broker, a few dozen jobs):
   * each takes its share of it, rather than the first child all of it while
   * the others idle. A single job still goes to one child, the first idle one.
   */
  private offer(proc: WorkerProcess): boolean {
    let cap = this.strategy.capacity(proc);
    if (cap === 0) return false;
    const waiting = this.outbound.length;
    if (waiting > cap) {
      if (this.takers > 1) cap = Math.min(cap, Math.ceil(waiting / this.takers));
    } else cap = Math.min(cap, this.share);
    if (this.maxTasksPerChild !== undefined) cap = Math.min(cap, this.maxTasksPerChild - proc.assigned);
    return cap > 0 && this.writeBatch(proc, cap);
  }

  private writeBatch(proc: WorkerProcess, cap: number): boolean {
    const batch = this.batch;
    const wasEmpty = proc.inFlight.length === 0;
    if (wasEmpty) {
      proc.freeAt = performance.now();
      proc.headStartFloor = Date.now();
    }
    let taken = 0;
    while (taken < cap) {
      const job = this.outbound.shift();
      if (job === undefined) break;
      const limit = this.hooks.hardLimit(job);
      try {
        if (limit === undefined) batch.push([MessageType.JOB, job.seq, job.name, job.args, job.meta]);
        else batch.push([MessageType.JOB, job.seq, job.name, job.args, job.meta, limit]);
      } catch (err) {
        this.hooks.onUnsendable(job, new ArgumentSerializationError(job.name, err));
        continue;
      }
      proc.inFlight.push(job);
      taken++;
    }
    if (taken === 0) return false;
    proc.assigned += taken;
    proc.state = 'busy';
    const bytes = batch.take();
    try {
      proc.giveClaims(taken);
    } catch (err) {
      this.hooks.onClaimsFailed(proc, err as Error);
      return false;
    }
    proc.write(bytes);
    if (wasEmpty) this.hooks.onNewHead(proc);
    if (this.lookahead !== undefined && proc.inFlight.length > 1) this.lookahead.wroteAhead(proc);
    if (this.maxTasksPerChild !== undefined && proc.assigned >= this.maxTasksPerChild) this.hooks.onQuota(proc);
    return true;
  }
}

/** The order jobs were applied in. */
function bySeq(a: PoolJob, b: PoolJob): number {
  return a.seq - b.seq;
}
