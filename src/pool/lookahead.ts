import type { PoolJob } from './job.js';
import type { WorkerProcess } from './worker-process.js';

/** A job that has run this long is a long one: the jobs written ahead behind it are taken back. */
export const TAKE_BACK_AFTER_MS = 10;
/**
 * How soon the parent looks again at a child whose job its start record
 * does not show started yet, or whose held jobs could not be taken back
 * (dispatch is gated, or they are being withdrawn).
 */
export const LOOK_EVERY_MS = 5;
/**
 * Jobs held ahead are taken for an idle child only when they are worth this
 * much time (their count by the mean job time), or when the child holding
 * them has been on its current job this long: taking back tiny jobs that
 * their child finishes in a moment costs more (a claim read, a write and a
 * wake-up for the idle child, a DROPPED from the other) than it saves.
 */
export const TAKE_FOR_IDLE_MS = 1;

export interface LookaheadHooks {
  /** The current children, in a stable order. */
  children(): readonly WorkerProcess[];
  /** Jobs taken back from a child: they go to the front of the outbound buffer. */
  giveBack(jobs: PoolJob[]): void;
  /** False while no job may be written to any child: nothing is taken back then either. */
  mayDispatch(): boolean;
  /** The mean time a job takes in a child, in ms (the fair strategy's moving average). */
  meanRunMs(): number;
  /** Look again for an idle child's jobs (held jobs not worth taking now may be soon). */
  recheck(): void;
}

/**
 * Keeps fair's promise for the jobs written ahead to a child that has a
 * claim pipe (claim-pipe.ts, scheduling/fair.ts): they wait there only
 * while nothing would run them sooner. They are taken back when another
 * child goes idle with nothing else to run (half of the most loaded
 * child's, for each idle one, once they are worth TAKE_FOR_IDLE_MS), and
 * when the job in front of them has run TAKE_BACK_AFTER_MS (all of them;
 * that child then gets no job until its long one ends).
 *
 * A child's job started no earlier than the last start the parent knows of
 * (WorkerProcess.headStartFloor: its last RESULT's, or the write that woke
 * it), so one timer waits for the first child that may have run long: no
 * look, no read of the start record, while every child holding jobs ahead
 * keeps finishing them. So a long job holds short ones for about
 * TAKE_BACK_AFTER_MS (later only while the parent's event loop is busy), and
 * for about TAKE_FOR_IDLE_MS at most while a child is idle.
 */
export class Lookahead {
  private timer: NodeJS.Timeout | undefined;
  /** When (epoch ms) the timer fires: the earliest a held-ahead child's job may have run long. */
  private due = Infinity;
  /** Looks again for an idle child's jobs once those not worth taking now may be. */
  private recheckTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly hooks: LookaheadHooks) {}

  /** Jobs were written ahead to `proc`: its running job is looked at once it may have run TAKE_BACK_AFTER_MS. */
  wroteAhead(proc: WorkerProcess): void {
    if (this.stopped) return;
    this.arm(proc.headStartFloor + TAKE_BACK_AFTER_MS);
  }

  /**
   * For `idle` children with nothing to run: jobs taken back from the
   * children holding the most ahead, when worth it (TAKE_FOR_IDLE_MS);
   * those not worth it yet are looked at again that much later.
   */
  forIdle(idle: number): PoolJob[] {
    const taken: PoolJob[] = [];
    const refused = new Set<WorkerProcess>();
    const mean = this.hooks.meanRunMs();
    const now = performance.now();
    for (let got = 0; got < idle;) {
      let victim: WorkerProcess | undefined;
      for (const proc of this.hooks.children()) {
        if (proc.inFlight.length < 2 || refused.has(proc)) continue;
        if (victim === undefined || proc.inFlight.length > victim.inFlight.length) victim = proc;
      }
      if (victim === undefined) break;
      if (!worthTaking(victim, mean, now)) {
        refused.add(victim);
        this.recheckSoon();
        continue;
      }
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
    this.due = Infinity;
    clearTimeout(this.recheckTimer);
    this.recheckTimer = undefined;
  }

  private recheckSoon(): void {
    if (this.recheckTimer !== undefined || this.stopped) return;
    this.recheckTimer = setTimeout(() => {
      this.recheckTimer = undefined;
      if (!this.stopped) this.hooks.recheck();
    }, TAKE_FOR_IDLE_MS);
    this.recheckTimer.unref();
  }

  /** Makes the timer fire by `due` (epoch ms); a later one already set is brought forward. */
  private arm(due: number): void {
    if (due >= this.due) return;
    clearTimeout(this.timer);
    this.due = due;
    this.timer = setTimeout(() => this.lookForLongJobs(), Math.max(0, due - Date.now()));
    this.timer.unref();
  }

  private lookForLongJobs(): void {
    this.timer = undefined;
    this.due = Infinity;
    if (this.stopped) return;
    const now = Date.now();
    let next = Infinity;
    for (const proc of this.hooks.children()) {
      if (proc.inFlight.length < 2) continue;
      let due = proc.headStartFloor + TAKE_BACK_AFTER_MS;
      // A timer counts whole ms and may fire a little before `due`: within 1 ms counts as due.
      if (due <= now + 1) {
        // Its job may have run long: only the start record tells.
        proc.learnStarts();
        const head = proc.inFlight.peek() as PoolJob;
        const ran = head.startedAt > 0 ? now - head.startedAt : -1;
        if (ran >= TAKE_BACK_AFTER_MS && this.hooks.mayDispatch()) {
          proc.heldBy = head.seq;
          const jobs = proc.takeBack(proc.inFlight.length - 1);
          if (jobs.length > 0) this.hooks.giveBack(jobs);
        }
        due = ran >= 0 && ran < TAKE_BACK_AFTER_MS ? head.startedAt + TAKE_BACK_AFTER_MS : now + LOOK_EVERY_MS;
      }
      if (proc.inFlight.length >= 2) next = Math.min(next, due);
    }
    if (next < Infinity) this.arm(next);
  }
}

/**
 * Whether the jobs `proc` holds ahead are worth taking for an idle child:
 * their count by the mean job time, or how long the child has been on its
 * current job (since it became free to start it), is TAKE_FOR_IDLE_MS or more.
 */
export function worthTaking(proc: WorkerProcess, meanRunMs: number, now: number): boolean {
  return (proc.inFlight.length - 1) * meanRunMs >= TAKE_FOR_IDLE_MS || now - proc.freeAt >= TAKE_FOR_IDLE_MS;
}
