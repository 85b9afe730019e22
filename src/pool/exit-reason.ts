import { ProtocolError, TimeLimitExceeded } from '../errors.js';
import type { WorkerProcess } from './worker-process.js';

/**
 * Why a child exited, as the Pool's 'process-down' event and the metrics say
 * it: 'retired' (the pool asked it to go, or ended it while closing or
 * shrinking), 'died' (on its own: a crash, an OOM kill, a signal from
 * outside), 'time-limit' (killed past its job's hard limit),
 * 'protocol-error' (killed for breaking the pipe protocol), 'killed' (ended
 * by the pool for another reason, e.g. a job that was terminated).
 */
export type ExitReason = 'retired' | 'died' | 'time-limit' | 'protocol-error' | 'killed';

export function exitReason(proc: WorkerProcess, expected: boolean): ExitReason {
  const why = proc.killReason;
  if (why instanceof ProtocolError) return 'protocol-error';
  if (why instanceof TimeLimitExceeded) return 'time-limit';
  if (why !== undefined) return 'killed';
  return expected ? 'retired' : 'died';
}
