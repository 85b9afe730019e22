import type { JobRecord, NewJob } from '../types.js';

/**
 * A private copy of a job record, so that a producer mutating its object
 * later (or a consumer mutating a delivery) changes nothing in the broker.
 * The payload is copied as exact-size bytes and never decoded (a
 * structuredClone of a view would copy its whole backing buffer, e.g. the
 * slab a msgpackr output lives in). Scheduling fields (`delay`, `eta`) are
 * dropped: they are the broker's business, not the job's.
 */
export function copyJob(job: JobRecord | NewJob): JobRecord {
  const record: JobRecord = {
    id: job.id,
    task: job.task,
    queue: job.queue,
    payload: new Uint8Array(job.payload),
    attempt: job.attempt,
    redeliveries: job.redeliveries,
    options: structuredClone(job.options),
    enqueuedAt: job.enqueuedAt,
  };
  if (job.replyTo !== undefined) record.replyTo = job.replyTo;
  if (job.uniqueKey !== undefined) record.uniqueKey = job.uniqueKey;
  if (job.uniqueTtl !== undefined) record.uniqueTtl = job.uniqueTtl;
  if (job.ownId === true) record.ownId = true;
  if (job.rateSlot !== undefined) record.rateSlot = job.rateSlot;
  if (job.scheduledFor !== undefined) record.scheduledFor = job.scheduledFor;
  if (job.workflow !== undefined) record.workflow = { ...job.workflow, queues: [...job.workflow.queues] };
  return record;
}
