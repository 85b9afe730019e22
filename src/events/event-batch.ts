import type { NodeEvent, NodeEventType } from './node-event.js';

/** The three events every job makes, held as a tuple rather than an object (they are most of the stream). */
export const STEP_TYPES = ['job-received', 'job-started', 'job-succeeded'] as const satisfies readonly NodeEventType[];

/**
 * A job step, compact: [type index in STEP_TYPES, at, jobId, task, queue,
 * attempt, pid, runtimeMs]. received has no pid or runtime; started no
 * attempt or runtime; succeeded has both when the job started here.
 */
export type JobStep = [
  step: 0 | 1 | 2,
  at: number,
  jobId: string,
  task: string,
  queue: string,
  attempt: number | undefined,
  pid: number | undefined,
  runtimeMs: number | undefined,
];

/** One write's events, all from one node, in the order they happened. */
export interface EventBatch {
  /** The node's name (job steps carry none of their own). */
  node: string;
  /** Its events, oldest first: job steps as tuples, the rest as NodeEvent objects. */
  items: (NodeEvent | JobStep)[];
}

/** The step as the event readers see (the same fields, in the same order, as a NodeEvent built for it). */
export function stepEvent(node: string, s: JobStep): NodeEvent {
  const [step, at, jobId, task, queue, attempt, pid, runtimeMs] = s;
  if (step === 0) return { type: 'job-received', at, node, jobId, task, queue, attempt: attempt ?? 0 };
  if (step === 1) return { type: 'job-started', at, node, jobId, task, queue, pid: pid ?? 0 };
  const e: NodeEvent = { at, node, jobId, task, queue, attempt: attempt ?? 0, type: 'job-succeeded' };
  if (pid !== undefined) e.pid = pid;
  if (runtimeMs !== undefined) e.runtimeMs = runtimeMs;
  return e;
}

/** Every event of a batch as readers see them. */
export function batchEvents(batch: EventBatch): NodeEvent[] {
  return batch.items.map((item) => (Array.isArray(item) ? stepEvent(batch.node, item) : item));
}
