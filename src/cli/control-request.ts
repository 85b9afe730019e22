import { randomUUID } from 'node:crypto';
import type { BrokerControl, BrokerMembership, ControlCommand, ControlReply, NodeInfo } from '../broker/types.js';
import { PreforkError, messageOf } from '../errors.js';

/** What asking nodes takes: the live nodes, and control requests to them. */
export type NodeAsker = BrokerControl & Pick<BrokerMembership, 'listNodes'>;

export interface NodeAnswer {
  node: NodeInfo;
  /** Undefined: no reply within the timeout. */
  reply: ControlReply | undefined;
}

/** No live node (or none with the name asked for): exit code 1, one line. */
export class NoSuchNodeError extends PreforkError {
  static override readonly code: string = 'PREFORK_NO_SUCH_NODE';
  constructor(name: string | undefined) {
    super(
      name === undefined ? 'no live worker nodes' : `no live worker node named '${name}' (see prefork inspect nodes)`,
    );
  }
}

/**
 * A setting was stored (a pause, a resume, a rate), but asking the nodes
 * failed (e.g. Redis at maxmemory refused the request, though not the
 * resume): exit code 1, saying what was stored, as the nodes follow it at
 * their next heartbeat anyway (the write flagged their leases).
 */
export class StoredNotToldError extends PreforkError {
  static override readonly code: string = 'PREFORK_STORED_NOT_TOLD';
  constructor(said: string, cause: unknown) {
    super(
      `${said}, but asking the nodes failed: ${messageOf(cause)}; the live nodes follow it at their next heartbeat`,
      { cause },
    );
  }
}

/**
 * Sends one control request to the live nodes (or the one named `--node`,
 * by name or id) and collects their replies for up to `timeoutMs`. Nodes
 * take requests at once (a pub/sub wake-up), and at the latest with their
 * next heartbeat (half the lease: 10 s by default).
 */
export async function askNodes(
  broker: NodeAsker,
  command: ControlCommand,
  args: (string | number)[],
  nodeName: string | undefined,
  timeoutMs: number,
): Promise<NodeAnswer[]> {
  const live = await broker.listNodes();
  const targets = nodeName === undefined ? live : live.filter((n) => n.name === nodeName || n.id === nodeName);
  if (targets.length === 0) throw new NoSuchNodeError(nodeName);
  const id = randomUUID();
  const posted = new Set(
    await broker.sendControl(
      targets.map((n) => n.id),
      { id, command, args },
      timeoutMs,
    ),
  );
  const replies = posted.size === 0 ? [] : await broker.waitForControlReplies(id, posted.size, timeoutMs);
  const byId = new Map(replies.map((r) => [r.nodeId, r]));
  // A node the broker did not post to had left (its lease ended) since it was listed: it was asked nothing.
  return targets.map((node) => ({ node, reply: byId.get(node.id) ?? (posted.has(node.id) ? undefined : gone(node)) }));
}

/** The answer of a node that left the cluster between the listing and the request. */
function gone(node: NodeInfo): ControlReply {
  return {
    node: node.name,
    nodeId: node.id,
    ok: false,
    error: 'not sent: the node left the cluster (its lease ended) before the request was posted',
  };
}

/** Why a node's answer is missing or failed: one line, for a table row, a message or `error` in JSON. */
export function failure(reply: NodeAnswer['reply'], timeoutMs: number): string {
  return reply === undefined ? `no reply within ${timeoutMs} ms` : `error: ${reply.error ?? 'failed'}`;
}
