import type { BrokerAdmin, DeadWorkflowJob } from '../broker/types.js';
import { queuesOf } from './queue-overview.js';

/** What retrying or deleting dead jobs by id did: how many, and the ids found in no dead set. */
export interface DeadChange {
  /** Jobs requeued (retry) or dropped (delete). */
  count: number;
  /** Ids that were not in the dead set of the queues looked at. */
  notDead: string[];
  /** retry: the dead jobs asked for that belong to a workflow, left dead. */
  inWorkflow: DeadWorkflowJob[];
  /** retry: the ids asked for whose dead job was left dead, a job with that id waiting, delayed or running. */
  inUse: string[];
}

/**
 * Retries (back to their queue) or deletes dead jobs by id, looking in
 * `queue` or, when undefined, in every queue the broker knows: one pass over
 * each queue's dead set for all the ids. `prefork dead retry|delete` and the
 * dashboard's buttons both come here.
 */
export async function changeDead(
  broker: BrokerAdmin,
  action: 'retry' | 'delete',
  ids: readonly string[],
  queue: string | undefined,
): Promise<DeadChange> {
  const wanted = [...new Set(ids)];
  const moved = new Set<string>();
  let count = 0;
  let left: DeadWorkflowJob[] = [];
  const busy = new Set<string>();
  for (const q of await queuesOf(broker, queue)) {
    const change = await broker.changeDead(q, action, wanted);
    count += change.count;
    for (const id of change.moved) moved.add(id);
    left.push(...change.inWorkflow);
    for (const id of change.inUse) busy.add(id);
  }
  // A job left dead is named only when nothing asked for by its id moved (an id can be dead twice).
  left = left.filter((j) => !moved.has(j.id));
  const inUse = [...busy].filter((id) => !moved.has(id));
  const named = new Set([...moved, ...left.map((j) => j.id), ...inUse]);
  const notDead = wanted.filter((id) => !named.has(id));
  return { count, notDead, inWorkflow: left, inUse };
}

/** Retries every dead job of `queues`; the workflows' jobs and those whose id is in use stay dead and are named. */
export async function retryAllDead(
  broker: BrokerAdmin,
  queues: readonly string[],
): Promise<{ count: number; inWorkflow: DeadWorkflowJob[]; inUse: string[] }> {
  let count = 0;
  const inWorkflow: DeadWorkflowJob[] = [];
  const inUse: string[] = [];
  for (const queue of queues) {
    const change = await broker.changeDead(queue, 'retry', undefined);
    count += change.count;
    inWorkflow.push(...change.inWorkflow);
    inUse.push(...change.inUse);
  }
  return { count, inWorkflow, inUse };
}

/** Why a workflow's dead job is not retried, one line per job (`prefork dead retry`, the dashboard). */
export function inWorkflowLines(jobs: readonly DeadWorkflowJob[]): string[] {
  return jobs.map(
    (j) =>
      `job ${j.id} is a step of workflow ${j.workflow}, which recorded its failure when it died: ` +
      'a rerun would belong to no workflow (enqueue the workflow again instead)',
  );
}

/** Why a dead job whose id a live job has is not retried, one line per id (`prefork dead retry`, the dashboard). */
export function inUseLines(ids: readonly string[]): string[] {
  return ids.map(
    (id) =>
      `job ${id}: a job with this id waits, is delayed or runs: a second one would share its id ` +
      '(delete this dead job, or retry it once that one has ended)',
  );
}
