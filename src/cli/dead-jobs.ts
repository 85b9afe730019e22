import type { BrokerAdmin } from '../broker/types.js';

/** What retrying or deleting dead jobs by id did: how many, and the ids found in no dead set. */
export interface DeadChange {
  /** Jobs requeued (retry) or dropped (delete). */
  count: number;
  /** Ids that were not in the dead set of the queues looked at. */
  notDead: string[];
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
  const notDead: string[] = [];
  let count = 0;
  for (const id of new Set(ids)) {
    let found = 0;
    for (const q of queues) found += await (action === 'retry' ? broker.retryDead(q, [id]) : broker.purgeDead(q, [id]));
    if (found === 0) notDead.push(id);
    count += found;
  }
  return { count, notDead };
}
