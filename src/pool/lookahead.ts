import type { PoolJob } from './job.js';
import type { WorkerProcess } from './worker-process.js';

/** A job that has run this long is a long one: the jobs written ahead behind it are taken back. */
export const TAKE_BACK_AFTER_MS = 10;
/** While some child holds jobs ahead, how often the parent looks at how long its job has run. */
export const LOOK_EVERY_MS = 5;

export interface LookaheadHooks {
  /** The current children, in a stable order. */
  children(): readonly WorkerProcess[];
  /** Jobs taken back from a child: they go to the front of the outbound buffer. */
  giveBack(jobs: PoolJob[]): void;
  /** False while no job may be written to any child: nothing is taken back then either. */
  mayDispatch(): boolean;
}

/**
 * Keeps fair's promise for the jobs written ahead to a child that has a
 * claim pipe (claim-pipe.ts, scheduling/fair.ts): they wait there only
 * while nothing would run them sooner. They are taken back when another
 * child goes idle with nothing else to run (half of the most loaded
 * child's, for each idle one), and when the job in front of them has run
 * TAKE_BACK_AFTER_MS (all of them; that child then gets no job until its
 * long one ends). So a long job holds short ones for at most
 * TAKE_BACK_AFTER_MS + LOOK_EVERY_MS, and never while a child is idle.
 */
export class Lookahead {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly hooks: LookaheadHooks) {}

  /** Jobs were written ahead to a child: its running job is looked at within LOOK_EVERY_MS. */
  wroteAhead(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => this.lookForLongJobs(), LOOK_EVERY_MS);
    this.timer.unref();
  }

  /** For `idle` children with nothing to run: jobs taken back from the children holding the most ahead. */
  forIdle(idle: number): PoolJob[] {
    const taken: PoolJob[] = [];
    const refused = new Set<WorkerProcess>();
    for (let got = 0; got < idle;) {
      let victim: WorkerProcess | undefined;
      for (const proc of this.hooks.children()) {
        if (proc.inFlight.length < 2 || refused.has(proc)) continue;
        if (victim === undefined || proc.inFlight.length > victim.inFlight.length) victim = proc;
      }
      if (victim === undefined) break;
      const jobs = victim.takeBack(Math.ceil((victim.inFlight.length - 1) / 2));
      if (jobs.length === 0) {
        refused.add(victim);
        continue;
      }
      taken.push(...jobs);
      got++;
    }
    return taken;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private lookForLongJobs(): void {
    this.timer = undefined;
    if (this.stopped) return;
    const now = Date.now();
    let ahead = false;
    for (const proc of this.hooks.children()) {
      if (proc.inFlight.length < 2) continue;
      proc.learnStarts();
      const head = proc.inFlight.peek() as PoolJob;
      if (head.startedAt > 0 && now - head.startedAt >= TAKE_BACK_AFTER_MS && this.hooks.mayDispatch()) {
        proc.heldBy = head.seq;
        const jobs = proc.takeBack(proc.inFlight.length - 1);
        if (jobs.length > 0) this.hooks.giveBack(jobs);
      }
      if (proc.inFlight.length >= 2) ahead = true;
    }
    if (ahead) this.wroteAhead();
  }
}
