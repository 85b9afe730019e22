import type { BrokerPauses, ControlCommand } from '../../broker/types.js';
import { PreforkError } from '../../errors.js';
import { askNodes, NoSuchNodeError, StoredNotToldError, type NodeAnswer, type NodeAsker } from '../control-request.js';

export interface PauseRequest {
  command: 'pause' | 'resume';
  queue: string;
  /** --node: a node's name or id; undefined: every node. */
  node: string | undefined;
  timeoutMs: number;
}

/** Why a resume on one node cannot start the queue there: it is paused on every node. */
export class PausedEverywhereError extends PreforkError {
  static override readonly code: string = 'PREFORK_PAUSED_EVERYWHERE';
  constructor(queue: string, node: string) {
    super(
      `queue '${queue}' is paused on every node, so it stays paused on '${node}': 'prefork control resume ${queue}' (without --node) resumes it everywhere`,
    );
  }
}

/**
 * `control pause|resume <queue> [--node NAME]`: the pause is remembered in
 * the broker first (a node that starts later reads it), then every live node
 * it concerns is told at once. Resolves the nodes' answers, and a line
 * saying what was remembered.
 */
export async function pauseOrResume(
  broker: NodeAsker & BrokerPauses,
  r: PauseRequest,
): Promise<{ said: string; answers: NodeAnswer[] }> {
  // A pause on one node is remembered under its name (its id changes when it restarts).
  let name: string | undefined;
  if (r.node !== undefined) {
    const node = (await broker.listNodes()).find((n) => n.name === r.node || n.id === r.node);
    if (node === undefined) throw new NoSuchNodeError(r.node);
    name = node.name;
  }
  const where = name === undefined ? 'on every node' : `on node '${name}'`;
  let said: string;
  if (r.command === 'pause') {
    const added = await broker.pauseQueue(r.queue, name);
    said = `queue '${r.queue}' ${added ? 'paused' : 'was already paused'} ${where} (remembered: nodes that start later honour it)`;
  } else {
    if (name !== undefined && (await broker.listPaused()).some((p) => p.queue === r.queue && p.node === undefined))
      throw new PausedEverywhereError(r.queue, name);
    const lifted = await broker.resumeQueue(r.queue, name);
    said = `queue '${r.queue}' ${lifted > 0 ? 'resumed' : 'was not paused'} ${where}`;
  }
  const command: ControlCommand = r.command;
  try {
    const answers = await askNodes(
      broker,
      command,
      [r.queue, name === undefined ? 'all' : 'node'],
      r.node,
      r.timeoutMs,
    );
    return { said, answers };
  } catch (err) {
    // Nobody to tell: the pause is remembered, and nodes read it when they start.
    if (err instanceof NoSuchNodeError && r.node === undefined)
      return { said: `${said}; no live worker nodes`, answers: [] };
    // Remembered all the same: say so rather than only the broker's error.
    if (!(err instanceof NoSuchNodeError)) throw new StoredNotToldError(said, err);
    throw err;
  }
}
