import { JobWithdrawnError, RevokedError, WorkerLostError } from '../errors.js';
import { stepFailure } from '../workflow/record.js';
import type { JobRecord, StepFailure } from './types.js';

/**
 * Why a workflow's member that left without a node's settlement failed, as
 * its workflow records it (docs/architecture.md, "Workflows"). The Redis
 * recovery script writes the poison one itself (recoverEntries-n.lua).
 */
export function revokedFailure(job: JobRecord): StepFailure {
  return stepFailure(job.id, job.task, new RevokedError(job.id));
}

/** A member taken out of its queue by `removeWaiting`. */
export function removedFailure(job: JobRecord): StepFailure {
  return stepFailure(
    job.id,
    job.task,
    new JobWithdrawnError(`job ${job.id} was taken out of its queue before it started`),
  );
}

/** A poison job buried by a recovery: `reason` is its dead letter's. */
export function poisonFailure(job: JobRecord, reason: string): StepFailure {
  return {
    id: job.id,
    name: job.task,
    error: { name: WorkerLostError.name, message: reason, code: WorkerLostError.code },
  };
}
