import type { PoolJob } from './job.js';
import type { WorkerProcess } from './worker-process.js';

interface Armed {
  hard: NodeJS.Timeout | undefined;
  soft: NodeJS.Timeout | undefined;
}

export interface TimeoutHooks {
  /** Hard limit passed: kill the child (SIGKILL) and fail the job with TimeLimitExceeded. */
  onHardTimeout(proc: WorkerProcess, job: PoolJob, limitMs: number): void;
  /** Soft limit passed: tell the child to abort the job's signal. */
  onSoftTimeout(proc: WorkerProcess, job: PoolJob): void;
}

/**
 * Soft and hard time limits per job, counted from the job's ACK. A child runs
 * one job at a time, so there is at most one pair of timers per child; with no
 * limits configured this costs nothing.
 */
export class TimeoutHandler {
  private readonly armed = new Map<WorkerProcess, Armed>();

  constructor(
    private readonly timeLimit: number | undefined,
    private readonly softTimeLimit: number | undefined,
    /** The task's own limits from defineTasks, between the job's and the pool's. */
    private readonly taskLimits: (name: string) => { timeLimit?: number; softTimeLimit?: number } | undefined,
    private readonly hooks: TimeoutHooks,
  ) {}

  /** The job's hard limit in ms, if it has one (also sent with the job, for the child's watchdog). */
  hardLimit(job: PoolJob): number | undefined {
    return job.options?.timeLimit ?? this.taskLimits(job.name)?.timeLimit ?? this.timeLimit;
  }

  start(proc: WorkerProcess, job: PoolJob): void {
    const hard = this.hardLimit(job);
    const soft = job.options?.softTimeLimit ?? this.taskLimits(job.name)?.softTimeLimit ?? this.softTimeLimit;
    if (hard === undefined && soft === undefined) return;
    this.clear(proc);
    this.armed.set(proc, {
      hard: hard === undefined ? undefined : setTimeout(() => this.hooks.onHardTimeout(proc, job, hard), hard),
      soft: soft === undefined ? undefined : setTimeout(() => this.hooks.onSoftTimeout(proc, job), soft),
    });
  }

  clear(proc: WorkerProcess): void {
    if (this.armed.size === 0) return;
    const timers = this.armed.get(proc);
    if (timers === undefined) return;
    clearTimeout(timers.hard);
    clearTimeout(timers.soft);
    this.armed.delete(proc);
  }

  clearAll(): void {
    for (const proc of [...this.armed.keys()]) this.clear(proc);
  }
}
