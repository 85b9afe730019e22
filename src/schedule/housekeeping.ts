import type { Logger } from 'pino';
import type { BrokerMembership, BrokerSchedule } from '../broker/types.js';

/**
 * The leader's schedule duty: forget the entries no live node runs any more
 * (removed from every node's schedule), so `prefork schedule list` shows
 * what runs. The stored names are read before the nodes: a node stores its
 * entries only after it registered, so an entry just added is never taken
 * for an unused one. Returns the names dropped.
 */
export async function dropUnusedEntries(broker: BrokerMembership & BrokerSchedule, log: Logger): Promise<string[]> {
  const stored = await broker.scheduleNames();
  if (stored.length === 0) return [];
  const inUse = new Set((await broker.listNodes()).flatMap((n) => n.schedule ?? []));
  const unused = stored.filter((name) => !inUse.has(name));
  if (unused.length === 0) return [];
  await broker.dropSchedule(unused);
  log.info({ entries: unused }, `dropped schedule entries no live node runs: ${unused.join(', ')}`);
  return unused;
}
