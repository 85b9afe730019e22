import { randomUUID } from 'node:crypto';
import type { NewJob } from '../broker/types.js';
import type { ScheduleEntry } from './define.js';

/** The job an entry enqueues for the tick `scheduledFor` (epoch ms): by the scheduler, or now by `prefork schedule run`. */
export function tickJob(entry: ScheduleEntry, scheduledFor: number, enqueuedAt = Date.now()): NewJob {
  return {
    id: randomUUID(),
    task: entry.task,
    queue: entry.queue,
    payload: entry.payload,
    attempt: 0,
    redeliveries: 0,
    options: entry.options,
    enqueuedAt,
    scheduledFor,
  };
}
