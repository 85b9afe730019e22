import type { JobLocation, ResultRecord } from './broker/types.js';

/** States that end a job's story: a stored record in one of them wins over where the job is found. */
const ENDED: ReadonlySet<string> = new Set(['SUCCESS', 'FAILURE', 'REVOKED']);

/** The name of the node registered as `nodeId` (`<name>#<suffix>`: src/worker.ts). */
export function nodeNameOf(nodeId: string): string {
  const at = nodeId.lastIndexOf('#');
  return at > 0 ? nodeId.slice(0, at) : nodeId;
}

/**
 * A job's state as `handle.state()` and `prefork result` tell it, from where
 * the broker finds the job (read first) and its stored record (read after,
 * so a job that ends between the two reads shows its end):
 * - waiting in `queue`: PENDING;
 * - delayed: PENDING with `dueAt` (and `rateLimited` when it waits for its
 *   turn under a rate limit); a retry waiting for its backoff: RETRY with
 *   `dueAt` (the next attempt) and the failed attempt's record;
 * - reserved by a node: the node's STARTED record when it keeps one
 *   (`trackStarted`: pid and start), else RECEIVED naming the node;
 * - ended: the stored record (SUCCESS, FAILURE, REVOKED);
 * - unknown, or its result expired or never kept: undefined.
 */
export function jobStatus(
  location: JobLocation | undefined,
  record: ResultRecord | undefined,
): ResultRecord | undefined {
  if (location === undefined || (record !== undefined && ENDED.has(record.state))) return record;
  const base: ResultRecord = {
    id: location.id,
    task: location.task,
    queue: location.queue,
    state: 'PENDING',
    retries: location.attempt,
    enqueuedAt: location.enqueuedAt,
  };
  switch (location.state) {
    case 'waiting':
      return base;
    case 'delayed':
      // Waiting for its rate-limit turn is no retry, whatever attempt it is on.
      if (location.rateLimited === true) return { ...base, dueAt: location.dueAt, rateLimited: true };
      if (location.attempt === 0) return { ...base, dueAt: location.dueAt };
      return {
        ...(record?.state === 'RETRY' ? record : base),
        queue: location.queue,
        state: 'RETRY',
        retries: location.attempt - 1,
        dueAt: location.dueAt,
      };
    case 'reserved': {
      // The node's own record of this attempt (trackStarted) says more: pid and start.
      if (
        record !== undefined &&
        (record.state === 'STARTED' || record.state === 'RECEIVED') &&
        record.retries === location.attempt
      )
        return record;
      const out: ResultRecord = { ...base, state: 'RECEIVED' };
      if (location.nodeId !== undefined) out.node = nodeNameOf(location.nodeId);
      if (location.reservedAt !== undefined) out.receivedAt = location.reservedAt;
      return out;
    }
  }
}
