import type { WorkerProcess } from '../pool/worker-process.js';
import type { SchedulingStrategy } from './strategy.js';

/** Jobs per write: large enough to amortise the syscall, small enough to spread a burst over all children. */
export const FCFS_BATCH = 256;

/** Any ready child whose pipe accepts data gets a batch; jobs may wait inside its pipe. */
export class FcfsStrategy implements SchedulingStrategy {
  readonly name = 'fcfs' as const;
  readonly takesBack = false;
  readonly meanRunMs = 0;

  capacity(proc: WorkerProcess): number {
    return proc.ready && !proc.blocked ? FCFS_BATCH : 0;
  }

  ran(): void {}
}
