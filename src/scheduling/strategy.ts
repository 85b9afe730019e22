import type { WorkerProcess } from '../pool/worker-process.js';
import type { StrategyName } from '../pool/options.js';

/**
 * Which child gets the next jobs (Celery's -O fair / -O fcfs). The TaskHandler
 * offers jobs to idle children first (lowest index first), then round-robin,
 * and asks the strategy how many jobs each may take right now; 0 skips the child.
 */
export interface SchedulingStrategy {
  readonly name: StrategyName;
  /** Children get claim pipes, and jobs written ahead are taken back when they would wait (lookahead.ts). */
  readonly takesBack: boolean;
  capacity(proc: WorkerProcess): number;
  /** A child took `ms` milliseconds for a job (from when it could start it to its result, as the parent sees it). */
  ran(ms: number): void;
  /** The mean of those times (ms), for a strategy that keeps one; 0 for one that does not. */
  readonly meanRunMs: number;
}
