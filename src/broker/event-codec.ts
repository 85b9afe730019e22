import { Packr } from 'msgpackr';
import { NODE_EVENT_TYPES, type NodeEvent } from '../events/node-event.js';

const packr = new Packr({ useRecords: false, moreTypes: false });
const TYPES = new Set<string>(NODE_EVENT_TYPES);

/** The events of one write, as one stream entry's value. */
export function encodeEvents(events: readonly NodeEvent[]): Buffer {
  return packr.pack(events);
}

/**
 * The events of one entry; what is not an event (written by something else,
 * or by a newer version with types this one does not know) is left out, so
 * a reader never stops on it. `skipped` counts those.
 */
export function decodeEvents(raw: Uint8Array): { events: NodeEvent[]; skipped: number } {
  let value: unknown;
  try {
    value = packr.unpack(raw);
  } catch {
    return { events: [], skipped: 1 };
  }
  if (!Array.isArray(value)) return { events: [], skipped: 1 };
  const events: NodeEvent[] = [];
  let skipped = 0;
  for (const item of value as unknown[]) {
    if (isEvent(item)) events.push(item);
    else skipped++;
  }
  return { events, skipped };
}

function isEvent(v: unknown): v is NodeEvent {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const e = v as Record<string, unknown>;
  return typeof e.type === 'string' && TYPES.has(e.type) && typeof e.at === 'number' && typeof e.node === 'string';
}
