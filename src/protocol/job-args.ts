import { messageOf } from '../errors.js';
import { decodeBody } from './codec.js';

/**
 * Payloads (msgpack of a job's argument array) up to this many bytes are kept
 * with the job's result record and reported by `inspect active|reserved`;
 * a larger one is named by its size only, so a job with megabytes of
 * arguments does not copy them into every result it writes.
 */
export const ARGS_KEPT_MAX = 64 * 1024;

/** A job's arguments decoded for display: the array, or why the payload does not decode. */
export type DecodedArgs = { ok: true; args: unknown[] } | { ok: false; error: string };

/**
 * Decodes a payload for display (never on the hot path: only the child
 * decodes a payload to run it). Never throws: a payload that does not decode,
 * or is not an array, says so.
 */
export function decodeJobArgs(payload: Uint8Array): DecodedArgs {
  let value: unknown;
  try {
    value = decodeBody(payload);
  } catch (err) {
    return { ok: false, error: `payload does not decode: ${messageOf(err)}` };
  }
  if (!Array.isArray(value)) return { ok: false, error: `payload is not an argument array (${typeof value})` };
  return { ok: true, args: value as unknown[] };
}
