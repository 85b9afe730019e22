import { BrokerOfflineError, BrokerUnavailableError, EnqueueIncompleteError } from '../../errors.js';

/**
 * What went wrong with an enqueue's pipeline, from its replies. The pipeline
 * is not a transaction, so each command that adds jobs (its ids in `adds`,
 * by its place in the pipeline) counts on its own: answered, its jobs are
 * enqueued; refused by Redis, or never sent (BrokerOfflineError: the
 * connection was down), they are not; unanswered (BrokerTimeoutError,
 * or the BrokerUnavailableError of a connection that closed first:
 * failUnanswered), nobody knows, since Redis may have run it before the
 * reply was lost, or runs what it received if it resumes. Replies
 * come in order: a timed-out command is never followed by a confirmed one
 * unless Redis resumed meanwhile, and then that one is enqueued all the same.
 */
export type EnqueueFailure =
  /** Every job landed; only the listing of their queue names failed. */
  | { kind: 'unlisted'; err: Error }
  /** To throw: the first failure as it came when no job is known to have landed, else EnqueueIncompleteError. */
  | { kind: 'failed'; err: Error };

export function enqueueFailure(
  replies: readonly [Error | null, unknown][],
  adds: ReadonlyMap<number, readonly string[]>,
): EnqueueFailure | undefined {
  let notApplied: Error | undefined;
  let unanswered: Error | undefined;
  let jobUnanswered: Error | undefined;
  const enqueued: string[] = [];
  const notEnqueued: string[] = [];
  const unconfirmed: string[] = [];
  for (const [i, [err]] of replies.entries()) {
    const ids = adds.get(i) ?? [];
    if (err === null) enqueued.push(...ids);
    else if (err instanceof BrokerUnavailableError && !(err instanceof BrokerOfflineError)) {
      // Said by the first command that adds jobs, rather than by the queues' listing ahead of it.
      if (ids.length > 0) jobUnanswered ??= err;
      unanswered ??= err;
      unconfirmed.push(...ids);
    } else {
      notApplied ??= err;
      notEnqueued.push(...ids);
    }
  }
  const first = jobUnanswered ?? unanswered ?? notApplied;
  if (first === undefined) return undefined;
  // Nothing known to have landed: the error as it came (an unanswered one says the jobs may be queued).
  if (enqueued.length === 0) return { kind: 'failed', err: first };
  if (notEnqueued.length === 0 && unconfirmed.length === 0) return { kind: 'unlisted', err: first };
  return { kind: 'failed', err: new EnqueueIncompleteError(enqueued, notEnqueued, notApplied ?? first, unconfirmed) };
}
