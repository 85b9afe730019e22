import { timerMs } from '../util/units.js';
import type { PoolJob } from './job.js';
import type { WorkerProcess } from './worker-process.js';

type Kind = 'hard' | 'soft';

interface Armed {
  job: PoolJob;
  /** When the limits were armed, on the monotonic clock (performance.now()) and on the wall clock (Date.now()). */
  armedMono: number;
  armedWall: number;
  /** A start the child stamped later than the parent's now (the wall clock stepped back between): now, instead. */
  pinnedStart: number | undefined;
  hardMs: number | undefined;
  softMs: number | undefined;
  hard: NodeJS.Timeout | undefined;
  soft: NodeJS.Timeout | undefined;
}

export interface TimeoutHooks {
  /** Hard limit passed: kill the child (SIGKILL) and fail the job with TimeLimitExceeded. */
  onHardTimeout(proc: WorkerProcess, job: PoolJob, limitMs: number): void;
  /** Soft limit passed: tell the child to abort the job's signal. */
  onSoftTimeout(proc: WorkerProcess, job: PoolJob): void;
  /** The job's start as the parent can know it now (it reads the start record): epoch ms, 0 if not started. */
  startOf(proc: WorkerProcess, job: PoolJob): number;
}

/**
 * Soft and hard time limits per job, counted from the job's start. A child
 * runs one job at a time, so there is at most one pair of timers per child;
 * with no limits configured this costs nothing. A job whose start the parent
 * has not heard of yet (a child records starts without waking the parent) is
 * armed from a time no later than its start; when a timer fires, the start is
 * looked up and the timer armed again for what is left, so a limit never
 * fires before the job has run that long. Time run is counted on the
 * monotonic clock from the arming (the start, an epoch ms from the child,
 * only places the job against it): a wall clock stepped back while the job
 * ran would otherwise delay each limit by the step, and past the watchdog's
 * grace the child killed itself, failing the job as lost rather than as
 * over its time limit.
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

  private softLimit(job: PoolJob): number | undefined {
    return job.options?.softTimeLimit ?? this.taskLimits(job.name)?.softTimeLimit ?? this.softTimeLimit;
  }

  /** True when the job has a soft or a hard limit. */
  limited(job: PoolJob): boolean {
    return this.hardLimit(job) !== undefined || this.softLimit(job) !== undefined;
  }

  /** Arms the job's limits from `from`: its start (epoch ms), or a time no later than it. */
  start(proc: WorkerProcess, job: PoolJob, from: number): void {
    const hardMs = this.hardLimit(job);
    const softMs = this.softLimit(job);
    if (hardMs === undefined && softMs === undefined) return;
    this.clear(proc);
    const armedWall = Date.now();
    const entry: Armed = {
      job,
      armedMono: performance.now(),
      armedWall,
      // A start after now is a clock stepped back since it was stamped: the job started no later than now.
      pinnedStart: from > armedWall ? armedWall : undefined,
      hardMs,
      softMs,
      hard: undefined,
      soft: undefined,
    };
    const left = Math.min(0, from - armedWall);
    if (hardMs !== undefined) entry.hard = this.arm(proc, entry, 'hard', left + hardMs);
    if (softMs !== undefined) entry.soft = this.arm(proc, entry, 'soft', left + softMs);
    this.armed.set(proc, entry);
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

  private arm(proc: WorkerProcess, entry: Armed, kind: Kind, ms: number): NodeJS.Timeout {
    // Capped: a longer wait fires at once in Node; expire() waits again for what is left.
    return setTimeout(() => this.expire(proc, entry, kind), timerMs(ms));
  }

  /** A timer fired: the limit passed if the job has run that long since its start, else wait for the rest. */
  private expire(proc: WorkerProcess, entry: Armed, kind: Kind): void {
    if (this.armed.get(proc) !== entry) return;
    const limit = (kind === 'hard' ? entry.hardMs : entry.softMs) as number;
    // Not started yet: it starts no earlier than now. Started: it ran for the monotonic time since the
    // arming, plus (or, started after it, less) the gap between its start and the arming, both epoch ms
    // read before any later step of the wall clock. A start stamped after now (the clock stepped back
    // between the stamp and the arming) is taken as now: else the limit would wait for the step.
    const now = entry.armedWall + (performance.now() - entry.armedMono);
    let startedAt = entry.pinnedStart ?? this.hooks.startOf(proc, entry.job);
    if (startedAt > now) startedAt = entry.pinnedStart = now;
    const ran = now - startedAt;
    const left = startedAt > 0 ? limit - ran : limit;
    if (left > 0) {
      entry[kind] = this.arm(proc, entry, kind, left);
      return;
    }
    entry[kind] = undefined;
    if (kind === 'hard') this.hooks.onHardTimeout(proc, entry.job, limit);
    else this.hooks.onSoftTimeout(proc, entry.job);
  }
}
