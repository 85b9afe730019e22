import { Packr } from 'msgpackr';
import { batchEvents, STEP_TYPES, type EventBatch, type JobStep } from '../events/event-batch.js';
import { NODE_EVENT_TYPES, type NodeEvent } from '../events/node-event.js';

const packr = new Packr({ useRecords: false, moreTypes: false });
const TYPES = new Set<string>(NODE_EVENT_TYPES);
/** The entry format that holds job steps as tuples (the first, an array of event objects, is still read). */
const FORMAT = 2;

/**
 * The events of one write, as one stream entry's value: the node once, a
 * base time, a table of the task and queue names, then each event (job
 * steps as short tuples, the rest as objects). A few dozen bytes per step
 * where an object took over a hundred: the stream is most of a node's bytes.
 */
export function encodeEvents(batch: EventBatch): Buffer {
  const base = firstAt(batch);
  const names = new Map<string, number>();
  const name = (s: string): number => {
    let i = names.get(s);
    if (i === undefined) names.set(s, (i = names.size));
    return i;
  };
  const items = batch.items.map((item) => {
    if (!Array.isArray(item)) return item;
    const [step, at, jobId, task, queue, attempt, pid, runtimeMs] = item;
    return [step, at - base, jobId, name(task), name(queue), attempt, pid, runtimeMs];
  });
  return packr.pack({ v: FORMAT, node: batch.node, base, names: [...names.keys()], items });
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
  if (Array.isArray(value)) return keepEvents(value as unknown[]);
  const batch = batchOf(value);
  if (batch === undefined) return { events: [], skipped: 1 };
  const { items, skipped } = batch;
  const kept = keepEvents(batchEvents({ node: batch.node, items }));
  return { events: kept.events, skipped: skipped + kept.skipped };
}

function firstAt(batch: EventBatch): number {
  const first = batch.items[0];
  if (first === undefined) return 0;
  return Array.isArray(first) ? first[1] : first.at;
}

/** A format-2 entry back as a batch; tuples that are not steps are counted as skipped. */
function batchOf(value: unknown): { node: string; items: EventBatch['items']; skipped: number } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const { node, base, names, items } = v;
  if (v.v !== FORMAT || typeof node !== 'string' || typeof base !== 'number') return undefined;
  if (!Array.isArray(names) || !Array.isArray(items)) return undefined;
  const out: EventBatch['items'] = [];
  let skipped = 0;
  for (const item of items as unknown[]) {
    if (!Array.isArray(item)) {
      out.push(item as NodeEvent);
      continue;
    }
    const step = stepOf(item, base, names as unknown[]);
    if (step === undefined) skipped++;
    else out.push(step);
  }
  return { node, items: out, skipped };
}

function stepOf(t: unknown[], base: number, names: unknown[]): JobStep | undefined {
  const [step, at, jobId, task, queue, attempt, pid, runtimeMs] = t;
  if (typeof step !== 'number' || STEP_TYPES[step] === undefined || typeof at !== 'number') return undefined;
  const taskName = typeof task === 'number' ? names[task] : undefined;
  const queueName = typeof queue === 'number' ? names[queue] : undefined;
  if (typeof jobId !== 'string' || typeof taskName !== 'string' || typeof queueName !== 'string') return undefined;
  return [
    step as JobStep[0],
    base + at,
    jobId,
    taskName,
    queueName,
    numberOr(attempt),
    numberOr(pid),
    numberOr(runtimeMs),
  ];
}

function numberOr(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

function keepEvents(values: readonly unknown[]): { events: NodeEvent[]; skipped: number } {
  const events: NodeEvent[] = [];
  let skipped = 0;
  for (const item of values) {
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
