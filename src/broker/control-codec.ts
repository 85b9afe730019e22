import type { Logger } from 'pino';
import type { ControlCommand, ControlReply, ControlRequest } from './types.js';
import { isRecord } from '../util/is-record.js';

/** Replies nobody collects are dropped after this long (both brokers). */
export const CONTROL_REPLY_TTL_MS = 60_000;

/**
 * The id a control wake-up carries when the leader lease was released (its
 * holder left; claimRecovery-3.lua): no node has it, and a node that stands
 * for leader beats at once to take the lease.
 */
export const LEADER_RELEASED = '';

const COMMANDS: readonly ControlCommand[] = [
  'ping',
  'stats',
  'grow',
  'shrink',
  'autoscale',
  'shutdown',
  'active',
  'reserved',
  'registered',
  'revoke',
  'pause',
  'resume',
  'rate-limit',
];

function isCommand(value: unknown): value is ControlCommand {
  return COMMANDS.some((c) => c === value);
}

/** JSON.parse that answers undefined for text that is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function encodeControlRequest(request: ControlRequest): string {
  return JSON.stringify(request);
}

/** Requests as stored; anything that is not one (another version's, or garbage) is logged and skipped. */
export function decodeControlRequests(raws: readonly (Buffer | string)[], log: Logger): ControlRequest[] {
  const out: ControlRequest[] = [];
  for (const raw of raws) {
    const text = raw.toString();
    const r = parseJson(text);
    if (
      isRecord(r) &&
      typeof r.id === 'string' &&
      isCommand(r.command) &&
      Array.isArray(r.args) &&
      r.args.every((a) => typeof a === 'number' || typeof a === 'string')
    ) {
      out.push({ id: r.id, command: r.command, args: r.args });
      continue;
    }
    log.warn({ request: text.slice(0, 200) }, 'ignored a control request this node cannot read');
  }
  return out;
}

export function encodeControlReply(reply: ControlReply): string {
  return JSON.stringify(reply);
}

/** A reply as stored, or undefined when it is not one (another version's, or garbage). */
export function decodeControlReply(raw: string): ControlReply | undefined {
  const r = parseJson(raw);
  if (!isRecord(r) || typeof r.node !== 'string' || typeof r.nodeId !== 'string' || typeof r.ok !== 'boolean')
    return undefined;
  if (r.error !== undefined && typeof r.error !== 'string') return undefined;
  const reply: ControlReply = { node: r.node, nodeId: r.nodeId, ok: r.ok };
  if (r.value !== undefined) reply.value = r.value;
  if (r.error !== undefined) reply.error = r.error;
  return reply;
}
