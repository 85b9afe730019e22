import { packedSize } from '../broker/event-codec.js';
import { cutText, TEXT_KEPT_MAX, whereWhole } from '../util/cut-text.js';
import type { NodeEvent } from './node-event.js';

/**
 * Most characters of an error's name or message, and most characters (a
 * string) or msgpack bytes (any other value) of a progress value, an event
 * keeps. The stream holds up to eventsMaxLen × 256 events: at 1 KiB each
 * that is ~280 MB at the very worst, where a task's 5 MB message reported
 * on every failure could push Redis to maxmemory.
 */
export const EVENT_VALUE_MAX = TEXT_KEPT_MAX;

/**
 * The event as the stream keeps it: an error name or message, or a
 * progress value, past EVENT_VALUE_MAX is cut and says so, naming where the
 * whole is kept (`whole`, e.g. `prefork result <id>`; none when it is kept
 * nowhere). Events within the bound (nearly all) come back as they are,
 * after a length comparison.
 */
export function boundEvent(e: NodeEvent, whole?: string): NodeEvent {
  const { error, progress } = e;
  const longError =
    error !== undefined && (error.message.length > EVENT_VALUE_MAX || error.name.length > EVENT_VALUE_MAX);
  const longProgress = progress !== undefined && progress !== null && isLong(progress);
  if (!longError && !longProgress) return e;
  const out: NodeEvent = { ...e };
  if (longError)
    out.error = { name: cutText(error.name, 'name', whole), message: cutText(error.message, 'message', whole) };
  if (longProgress) out.progress = cutProgress(progress, whole);
  return out;
}

/** Strings by length; numbers, booleans and bigints are short; bytes and objects by their msgpack size. */
function isLong(value: unknown): boolean {
  if (typeof value === 'string') return value.length > EVENT_VALUE_MAX;
  if (typeof value !== 'object' && typeof value !== 'function') return false;
  if (value instanceof Uint8Array) return value.byteLength > EVENT_VALUE_MAX;
  try {
    return packedSize(value) > EVENT_VALUE_MAX;
  } catch {
    // It came decoded from msgpack, so it packs; were it not to, the event would not be written at all.
    return true;
  }
}

function cutProgress(value: unknown, whole: string | undefined): string {
  if (typeof value === 'string') return cutText(value, 'progress', whole);
  return `[progress cut: larger than ${EVENT_VALUE_MAX} bytes${whereWhole(whole)}]`;
}
