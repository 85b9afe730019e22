import { Packr } from 'msgpackr';
import { batchEvents, STEP_TYPES, type EventBatch, type JobStep } from '../events/event-batch.js';
import type { NodeEvent, NodeEventType } from '../events/node-event.js';

/**
 * A progress value travels in its job-progress event: a BigInt past 64 bits
 * (which the child sent and the result record keeps) needs msgpack's
 * extension, or the whole write of the events, and the progress settlement
 * with it, would be refused.
 */
const packr = new Packr({ useRecords: false, moreTypes: false, useBigIntExtension: true });
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
 * The events of one entry, each a well-typed NodeEvent (isEvent); what is
 * not one (written by something else, with fields of the wrong types, or
 * by a newer version with types this one does not know) is left out, so a
 * reader never stops on it nor prints it wrong. `skipped` counts those.
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
  if (v.v !== FORMAT || typeof node !== 'string' || typeof base !== 'number' || !Number.isFinite(base))
    return undefined;
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
  if (!optionalNumber(attempt) || !optionalNumber(pid) || !optionalNumber(runtimeMs)) return undefined;
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

/** A tuple's optional number: absent (undefined), or a finite number; anything else fails the step. */
function optionalNumber(v: unknown): boolean {
  return v === undefined || (typeof v === 'number' && Number.isFinite(v));
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

/** Largest epoch ms a Date can hold: `at` and the other times are printed as dates. */
const MAX_EPOCH_MS = 8.64e15;

type FieldCheck = (v: unknown) => boolean;
const isText: FieldCheck = (v) => typeof v === 'string';
const isCount: FieldCheck = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
/** A pid: -1 stands for a child whose spawn failed (WorkerProcess.pid). */
const isPid: FieldCheck = (v) => typeof v === 'number' && Number.isSafeInteger(v);
const isDuration: FieldCheck = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isTime: FieldCheck = (v) => typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= MAX_EPOCH_MS;
const isErrorShape: FieldCheck = (v) =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Record<string, unknown>).name === 'string' &&
  typeof (v as Record<string, unknown>).message === 'string';

/** What each field of a NodeEvent must be when it is there (`progress` may be any value). */
const FIELDS = new Map<string, FieldCheck>([
  ['jobId', isText],
  ['task', isText],
  ['queue', isText],
  ['attempt', isCount],
  ['pid', isPid],
  ['runtimeMs', isDuration],
  ['retryAt', isTime],
  ['dueAt', isTime],
  ['error', isErrorShape],
  ['exitCode', (v) => v === null || (typeof v === 'number' && Number.isSafeInteger(v))],
  ['signal', (v) => v === null || typeof v === 'string'],
  ['reason', isText],
  ['from', isCount],
  ['to', isCount],
]);

const JOB = ['jobId', 'task', 'queue'] as const;

/** The fields each type carries whenever a node writes it (job-events.ts, worker.ts); others are checked when there. */
const REQUIRED = new Map<string, readonly (keyof NodeEvent)[]>(
  Object.entries({
    'job-received': [...JOB, 'attempt'],
    'job-started': [...JOB, 'pid'],
    'job-progress': JOB,
    'job-succeeded': [...JOB, 'attempt'],
    'job-failed': [...JOB, 'attempt', 'error'],
    'job-retried': [...JOB, 'attempt', 'retryAt', 'error'],
    'job-lost': [...JOB, 'attempt', 'exitCode', 'signal'],
    'job-revoked': [...JOB, 'attempt'],
    'job-given-back': [...JOB, 'attempt'],
    'job-deferred': [...JOB, 'attempt', 'dueAt'],
    'process-up': ['pid'],
    'process-down': ['pid', 'exitCode', 'signal', 'reason'],
    'scale-up': ['from', 'to'],
    'scale-down': ['from', 'to'],
    'pool-failed': ['error'],
    'node-online': [],
    'node-offline': [],
    'node-fenced': [],
  } satisfies Record<NodeEventType, readonly (keyof NodeEvent)[]>),
);

/**
 * A well-typed NodeEvent: a known type, `at` a time a Date can show, a node
 * name, the fields its type always carries, and every known field there of
 * its type. Readers (`prefork events`, the dashboard, `client.events()`)
 * then use its fields as they are; fields it does not know (a newer
 * version's) are let through.
 */
function isEvent(v: unknown): v is NodeEvent {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const e = v as Record<string, unknown>;
  const required = typeof e.type === 'string' ? REQUIRED.get(e.type) : undefined;
  if (required === undefined || !isTime(e.at) || typeof e.node !== 'string') return false;
  for (const key of required) if (e[key] === undefined) return false;
  for (const [key, check] of FIELDS) {
    const value = e[key];
    if (value !== undefined && !check(value)) return false;
  }
  return true;
}

/** A value's size as the stream holds it (msgpack, as encodeEvents packs it), in bytes. */
export function packedSize(value: unknown): number {
  return packr.pack(value).length;
}
