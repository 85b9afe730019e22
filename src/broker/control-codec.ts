import type { Logger } from 'pino';
import type { ControlCommand, ControlReply, ControlRequest } from './types.js';

/** Replies nobody collects are dropped after this long (both brokers). */
export const CONTROL_REPLY_TTL_MS = 60_000;

const COMMANDS: readonly ControlCommand[] = ['ping', 'stats', 'grow', 'shrink', 'autoscale', 'shutdown'];

export function encodeControlRequest(request: ControlRequest): string {
  return JSON.stringify(request);
}

/** Requests as stored; anything that is not one (another version's, or garbage) is logged and skipped. */
export function decodeControlRequests(raws: readonly (Buffer | string)[], log: Logger): ControlRequest[] {
  const out: ControlRequest[] = [];
  for (const raw of raws) {
    const text = raw.toString();
    try {
      const r = JSON.parse(text) as Partial<ControlRequest>;
      if (
        typeof r.id === 'string' &&
        COMMANDS.includes(r.command as ControlCommand) &&
        Array.isArray(r.args) &&
        r.args.every((a) => typeof a === 'number')
      ) {
        out.push({ id: r.id, command: r.command as ControlCommand, args: r.args });
        continue;
      }
    } catch {
      // fall through
    }
    log.warn({ request: text.slice(0, 200) }, 'ignored a control request this node cannot read');
  }
  return out;
}

export function encodeControlReply(reply: ControlReply): string {
  return JSON.stringify(reply);
}

export function decodeControlReply(raw: string): ControlReply | undefined {
  try {
    const r = JSON.parse(raw) as ControlReply;
    return typeof r.node === 'string' && typeof r.ok === 'boolean' ? r : undefined;
  } catch {
    return undefined;
  }
}
