import type { ListedJob } from '../broker/types.js';
import { decodeJobArgs } from '../protocol/job-args.js';
import { jsonText } from './json-text.js';

/** Arguments longer than this (as JSON) are cut in tables; `--json` prints them whole. */
export const ARGS_SHOWN = 60;

/** A job's payload as kept: the bytes, or only their size when they were too large to keep. */
export interface KeptPayload {
  payload?: Uint8Array | undefined;
  payloadBytes?: number | undefined;
}

/** The arguments for a table: JSON, shortened; what cannot be shown says why (never throws). */
export function argsText({ payload, payloadBytes }: KeptPayload): string {
  if (payload === undefined) return payloadBytes === undefined ? '-' : `<${payloadBytes} bytes, not kept>`;
  const decoded = decodeJobArgs(payload);
  if (!decoded.ok) return `<${decoded.error}>`;
  const text = jsonText(decoded.args);
  return text.length <= ARGS_SHOWN ? text : `${text.slice(0, ARGS_SHOWN - 3)}...`;
}

/** The arguments for `--json`: whole (`args`), or why they cannot be shown (`argsError`). */
export function argsJson({ payload, payloadBytes }: KeptPayload): { args?: unknown[]; argsError?: string } {
  if (payload === undefined)
    return payloadBytes === undefined ? {} : { argsError: `${payloadBytes} bytes, too large to keep` };
  const decoded = decodeJobArgs(payload);
  return decoded.ok ? { args: decoded.args } : { argsError: decoded.error };
}

/** A payload sent as base64 (a control reply). */
export function fromBase64(text: string | undefined): Uint8Array | undefined {
  return text === undefined ? undefined : Buffer.from(text, 'base64');
}

/** A listed job for `--json`: its record with the arguments decoded (whole), and where it is. */
export function listedJobJson(l: ListedJob): Record<string, unknown> {
  const { job } = l;
  const out: Record<string, unknown> = {
    id: job.id,
    task: job.task,
    queue: job.queue,
    attempt: job.attempt,
    redeliveries: job.redeliveries,
    enqueuedAt: job.enqueuedAt,
    ...argsJson({ payload: job.payload }),
    payloadBytes: job.payload.byteLength,
  };
  if (l.dueAt !== undefined) out.dueAt = l.dueAt;
  if (l.reason !== undefined) out.reason = l.reason;
  if (l.diedAt !== undefined) out.diedAt = l.diedAt;
  return out;
}

/** An epoch ms for a table. */
export function isoTime(at: number | undefined): string {
  return at === undefined || !Number.isFinite(at) ? '-' : new Date(at).toISOString();
}
