import type { JobState } from './types.js';

const FINAL: ReadonlySet<JobState> = new Set<JobState>(['SUCCESS', 'FAILURE', 'REVOKED']);

/** A state after which the job does nothing more: its result is announced to a waiting client. */
export function isFinalState(state: JobState): boolean {
  return FINAL.has(state);
}
