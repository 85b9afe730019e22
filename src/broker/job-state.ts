import type { JobState } from './types.js';

const FINAL: ReadonlySet<JobState> = new Set<JobState>(['SUCCESS', 'FAILURE', 'REVOKED']);

/** A state after which the job does nothing more: its result is announced to a waiting client. */
export function isFinalState(state: JobState): boolean {
  return FINAL.has(state);
}

const STATES: ReadonlySet<string> = new Set<JobState>([
  'PENDING',
  'RECEIVED',
  'STARTED',
  'RETRY',
  'SUCCESS',
  'FAILURE',
  'REVOKED',
]);

/** True for one of the states a stored record can hold (read from Redis, it may hold anything). */
export function isJobState(state: unknown): state is JobState {
  return typeof state === 'string' && STATES.has(state);
}
