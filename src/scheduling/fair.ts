import type { WorkerProcess } from '../pool/worker-process.js';
import type { SchedulingStrategy } from './strategy.js';

/** Only a child with nothing in flight gets a job: a long job never holds short ones hostage. */
export class FairStrategy implements SchedulingStrategy {
  readonly name = 'fair' as const;

  capacity(proc: WorkerProcess): number {
    return proc.ready && !proc.blocked && proc.inFlight.length === 0 ? 1 : 0;
  }
}
