import type { Logger } from 'pino';
import type { BrokerSchedule, LeaderLease } from '../broker/types.js';

/**
 * The leader's schedule duty: forget the entries no live node runs any more
 * (removed from every node's schedule), so `prefork schedule list` shows
 * what runs. The broker checks the live nodes and this node's hold on the
 * lease in the same step as the drop (dropUnusedSchedule): a leader stalled
 * past its lease between reading the entries and the nodes would find no
 * live node, itself included, and drop the entries every node runs, losing
 * their missed ticks. Returns the names dropped.
 */
export async function dropUnusedEntries(broker: BrokerSchedule, lease: LeaderLease, log: Logger): Promise<string[]> {
  const unused = await broker.dropUnusedSchedule(lease);
  if (unused.length > 0)
    log.info(
      { entries: unused, token: lease.token },
      `dropped schedule entries no live node runs: ${unused.join(', ')}`,
    );
  return unused;
}
