import { JobWithdrawnError, RevokedError, revokedMessage, WorkerLostError } from '../errors.js';
import { stepFailure } from '../workflow/record.js';
import type { JobRecord, ResultRecord, StepFailure } from './types.js';

/**
 * Why a workflow's member that left without a node's settlement failed, as
 * its workflow records it (docs/architecture.md, "Workflows"). The Redis
 * recovery script writes the poison one itself (recoverEntries-n.lua).
 */
export function revokedFailure(job: JobRecord): StepFailure {
  // Made for each member a revoke takes out: its fields, not an Error (whose stack it would not keep).
  return {
    id: job.id,
    name: job.task,
    error: { name: RevokedError.name, message: revokedMessage(job.id), code: RevokedError.code },
  };
}

/** A member taken out of its queue by `removeWaiting`. */
export function removedFailure(job: JobRecord): StepFailure {
  return stepFailure(
    job.id,
    job.task,
    new JobWithdrawnError(`job ${job.id} was taken out of its queue before it started`),
  );
}

/** A member dropped by a purge of its queue (purgeQueue-n.lua writes the same on Redis). */
export function purgedFailure(job: JobRecord, queue: string): StepFailure {
  return stepFailure(
    job.id,
    job.task,
    new JobWithdrawnError(`job ${job.id} was purged from queue ${queue} before it started`),
  );
}

/**
 * The FAILURE result of a poison job buried by a recovery (no node will
 * settle it): a WorkerLostError with its dead letter's `reason`, as the
 * Redis recovery script writes it (recoverEntries-n.lua); the job's own
 * ignoreResult keeps the state alone.
 */
export function poisonRecord(job: JobRecord, queue: string, reason: string, now: number): ResultRecord {
  const record: ResultRecord = {
    id: job.id,
    task: job.task,
    queue,
    state: 'FAILURE',
    retries: job.attempt,
    enqueuedAt: job.enqueuedAt,
    finishedAt: now,
  };
  if (job.options.ignoreResult === true) record.ignoreResult = true;
  else record.error = { name: WorkerLostError.name, message: reason, props: { code: WorkerLostError.code } };
  return record;
}

/** A poison job buried by a recovery: `reason` is its dead letter's. */
export function poisonFailure(job: JobRecord, reason: string): StepFailure {
  return {
    id: job.id,
    name: job.task,
    error: { name: WorkerLostError.name, message: reason, code: WorkerLostError.code },
  };
}
