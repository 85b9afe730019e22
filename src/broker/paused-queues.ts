import { OptionError } from '../errors.js';
import { checkQueueName, throwOptionError } from '../job-option-checks.js';
import type { PausedQueue } from './types.js';

/** A pause's queue and node name, as both brokers check them (OptionError names a bad one). */
export function checkPause(queue: string, node: string | undefined): void {
  checkQueueName('queue', queue, throwOptionError);
  if (node !== undefined && (typeof node !== 'string' || node === ''))
    throw new OptionError('node', node, 'a node name (a non-empty string)');
}

/**
 * How both brokers store a pause: `<queue>` (every node) or `<queue> <node
 * name>`. A queue name has no space (checkQueueName), so the first space
 * ends it whatever the node's name holds.
 */
export function pausedMember(queue: string, node: string | undefined): string {
  return node === undefined ? queue : `${queue} ${node}`;
}

/** The pause a stored member stands for. */
export function pausedFromMember(member: string): PausedQueue {
  const space = member.indexOf(' ');
  return space < 0 ? { queue: member } : { queue: member.slice(0, space), node: member.slice(space + 1) };
}

/** Pauses in a stable order: by queue, the pause on every node first, then by node name. */
export function sortPaused(pauses: PausedQueue[]): PausedQueue[] {
  return pauses.sort(
    (a, b) =>
      a.queue.localeCompare(b.queue) ||
      (a.node === undefined ? -1 : b.node === undefined ? 1 : a.node.localeCompare(b.node)),
  );
}
