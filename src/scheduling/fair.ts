import type { WorkerProcess } from '../pool/worker-process.js';
import type { SchedulingStrategy } from './strategy.js';

/** A child with a claim pipe holds at most about this many ms of jobs beyond the one it runs (by the mean job time). */
export const FAIR_AHEAD_MS = 4;
/** ... and at most this many jobs in all. */
export const FAIR_MAX_HELD = 64;
/** Weight of the newest run time in the moving average. */
const ALPHA = 0.05;

/**
 * Only a child with room gets a job: a long job never holds short ones
 * hostage. Without a claim pipe a child gets one job at a time, when it has
 * none (Celery's -O fair). With one (claim-pipe.ts), a child may also hold
 * the next few short jobs, FAIR_AHEAD_MS of them by the mean job time (jobs
 * over 4 ms: none), so it goes from one to the next without waiting
 * for the parent; those are taken back if another child goes idle with
 * nothing to do, or if the job in front of them runs long (lookahead.ts).
 */
export class FairStrategy implements SchedulingStrategy {
  readonly name = 'fair' as const;
  readonly takesBack = true;
  /** Moving average of a job's time in a child, in ms; until jobs finish, long enough that none is held ahead. */
  private meanMs = 2 * FAIR_AHEAD_MS;

  /** The mean time a job takes in a child (ms), as measured so far. */
  get meanRunMs(): number {
    return this.meanMs;
  }

  capacity(proc: WorkerProcess): number {
    // Jobs taken back and not yet dropped: a new job's claim could let one of them start.
    if (!proc.ready || proc.blocked || proc.dropsAwaited.size > 0) return 0;
    const held = proc.inFlight.length;
    if (held === 0) return 1;
    if (!proc.takesBack || proc.heldBy === proc.inFlight.peek()?.seq) return 0;
    // Refilled once half is gone, in one write: a write per job would cost the parent a syscall each.
    const max = this.maxHeld();
    return held > max >> 1 ? 0 : max - held;
  }

  ran(ms: number): void {
    this.meanMs += ALPHA * (Math.max(0, ms) - this.meanMs);
  }

  /** How many jobs a child with a claim pipe may hold, running one included. */
  maxHeld(): number {
    return Math.min(FAIR_MAX_HELD, 1 + Math.floor(FAIR_AHEAD_MS / Math.max(this.meanMs, 0.01)));
  }
}
