import type { BrokerAdmin, BrokerPauses, PausedQueue, QueueCounts } from '../broker/types.js';

/** One queue's counts and where it is paused: a row of `prefork inspect queues`. */
export interface QueueRow extends QueueCounts {
  /** Paused on every node. */
  paused: boolean;
  /** The names of the single nodes it is paused on. */
  pausedOn: string[];
}

/** The queues a command acts on: the one named, else every queue the broker has seen. */
export async function queuesOf(broker: Pick<BrokerAdmin, 'knownQueues'>, queue: string | undefined): Promise<string[]> {
  return queue !== undefined ? [queue] : broker.knownQueues();
}

/**
 * Every queue the broker knows, and every paused one (a queue paused before
 * any job reached it is listed too), with its counts: one bounded read per
 * queue, however many jobs wait. `prefork inspect queues` and the dashboard.
 */
export async function queueOverview(b: BrokerAdmin & Pick<BrokerPauses, 'listPaused'>): Promise<QueueRow[]> {
  const [known, pauses] = await Promise.all([b.knownQueues(), b.listPaused()]);
  const names = [...new Set([...known, ...pauses.map((p) => p.queue)])].sort();
  return (await b.counts(names)).map((c) => ({ ...c, ...pausedOn(c.queue, pauses) }));
}

/** Where a queue is paused: on every node, and on which nodes alone. */
function pausedOn(queue: string, pauses: readonly PausedQueue[]): { paused: boolean; pausedOn: string[] } {
  const mine = pauses.filter((p) => p.queue === queue);
  return {
    paused: mine.some((p) => p.node === undefined),
    pausedOn: mine.flatMap((p) => (p.node === undefined ? [] : [p.node])),
  };
}
