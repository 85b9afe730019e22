import type { BrokerAdmin } from '../broker/types.js';

/** Dead jobs read per page when looking for a workflow's jobs among them. */
const PAGE = 1000;

/** A dead job of a workflow: `retryDead` leaves it where it is (its workflow recorded its failure already). */
export interface DeadWorkflowJob {
  /** The job's id. */
  id: string;
  /** Its workflow's id. */
  workflow: string;
}

/** What retrying or deleting dead jobs by id did: how many, and the ids found in no dead set. */
export interface DeadChange {
  /** Jobs requeued (retry) or dropped (delete). */
  count: number;
  /** Ids that were not in the dead set of the queues looked at. */
  notDead: string[];
  /** retry: the dead jobs asked for that belong to a workflow, left dead. */
  inWorkflow: DeadWorkflowJob[];
}

/**
 * Retries (back to their queue) or deletes dead jobs by id, looking in
 * `queue` or, when undefined, in every queue the broker knows. One id at a
 * time, so the ones that are not dead can be named. `prefork dead retry|delete`
 * and the dashboard's buttons both come here.
 */
export async function changeDead(
  broker: BrokerAdmin,
  action: 'retry' | 'delete',
  ids: readonly string[],
  queue: string | undefined,
): Promise<DeadChange> {
  const queues = queue !== undefined ? [queue] : await broker.knownQueues();
  let notDead: string[] = [];
  let count = 0;
  for (const id of new Set(ids)) {
    let found = 0;
    for (const q of queues) found += await (action === 'retry' ? broker.retryDead(q, [id]) : broker.purgeDead(q, [id]));
    if (found === 0) notDead.push(id);
    count += found;
  }
  // Not moved: not dead, or a workflow's job (retryDead leaves those): tell the two apart.
  const inWorkflow = action === 'retry' && notDead.length > 0 ? await deadWorkflowJobs(broker, queues, notDead) : [];
  if (inWorkflow.length > 0) notDead = notDead.filter((id) => !inWorkflow.some((j) => j.id === id));
  return { count, notDead, inWorkflow };
}

/** The workflows' jobs in the dead sets of `queues` (only those of `ids` when given), read a page at a time. */
export async function deadWorkflowJobs(
  broker: BrokerAdmin,
  queues: readonly string[],
  ids?: readonly string[],
): Promise<DeadWorkflowJob[]> {
  const wanted = ids === undefined ? undefined : new Set(ids);
  const out: DeadWorkflowJob[] = [];
  for (const queue of queues) {
    let cursor: string | undefined;
    do {
      const page = await broker.listJobs(queue, 'dead', PAGE, cursor);
      for (const { job } of page.jobs)
        if (job.workflow !== undefined && (wanted === undefined || wanted.has(job.id)))
          out.push({ id: job.id, workflow: job.workflow.id });
      cursor = page.next;
    } while (cursor !== undefined);
  }
  return out;
}

/** Why a workflow's dead job is not retried, one line per job (`prefork dead retry`, the dashboard). */
export function inWorkflowLines(jobs: readonly DeadWorkflowJob[]): string[] {
  return jobs.map(
    (j) =>
      `job ${j.id} is a step of workflow ${j.workflow}, which recorded its failure when it died: ` +
      'a rerun would belong to no workflow (enqueue the workflow again instead)',
  );
}
