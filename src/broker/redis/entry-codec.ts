import { Packr } from 'msgpackr';
import { BrokerRefusedError, describeValue, messageOf, OptionError } from '../../errors.js';
import { isJobState } from '../job-state.js';
import { checkJobRecordOptions, isQueueName, throwOptionError } from '../../job-option-checks.js';
import type { JobOptions } from '../../job-types.js';
import type { Delivery, JobRecord, NewJob, ResultRecord, WorkflowRef } from '../types.js';

/**
 * How a job lives in a stream entry: the fixed field set id, task, payload,
 * attempt, redeliveries, meta (compact listpacks; the Lua scripts edit
 * attempt and redeliveries in place). `meta` is JSON of the rarely read
 * parts. A timer marker has the same fields with id and task empty and its
 * due time (ms) as meta.
 */
export type EntryFields = (string | Buffer)[];

interface Meta {
  /** options (read as unknown: checkJobRecordOptions checks them) */
  o?: unknown;
  e?: number;
  r?: string;
  /** replyInline */
  i?: 1;
  /** uniqueKey */
  u?: string;
  /** uniqueTtl, whole ms (lib/prelude.lua uniqueLockOf reads it for a dead-set retry) */
  ut?: number;
  /** ownId */
  x?: 1;
  /** scheduledFor */
  s?: number;
  /** workflow: [id, node, queues] (read as unknown: workflowRef checks it) */
  w?: unknown;
}

/**
 * The optional parts of a job kept in meta, and its options; what the
 * settlement will rely on is checked here, where entries are read: a
 * problem is returned (the job is then malformed, and gets no workflow).
 */
function readMeta(job: JobRecord, meta: Meta): string | undefined {
  if (typeof meta.r === 'string') job.replyTo = meta.r;
  if (meta.i === 1) job.replyInline = true;
  if (typeof meta.u === 'string') job.uniqueKey = meta.u;
  if (typeof meta.ut === 'number') job.uniqueTtl = meta.ut;
  if (meta.x === 1) job.ownId = true;
  if (typeof meta.s === 'number') job.scheduledFor = meta.s;
  if (meta.w !== undefined) {
    const workflow = workflowRef(meta.w);
    if (typeof workflow === 'string') return `workflow reference ${workflow}`;
    job.workflow = workflow;
  }
  return optionsProblem(job.options);
}

/**
 * A job's options as Client.enqueue would have let them through
 * (checkJobRecordOptions): the OptionError's message naming the field, or undefined.
 */
function optionsProblem(options: unknown): string | undefined {
  try {
    checkJobRecordOptions(options, throwOptionError);
    return undefined;
  } catch (err) {
    if (err instanceof OptionError) return err.message;
    throw err;
  }
}

/**
 * A workflow place [id, node, queues] as the fetch and recovery scripts use
 * it (an id, a node index, the workflow's queues), or what is wrong with it.
 * lua/lib/workflow.lua wfRefOf reads the same rule.
 */
function workflowRef(w: unknown): WorkflowRef | string {
  if (!Array.isArray(w)) return `${describeValue(w)} is not [id, node, queues]`;
  const [id, node, queues] = w as unknown[];
  if (typeof id !== 'string' || id === '') return `has an id ${describeValue(id)} that is not a non-empty string`;
  if (typeof node !== 'number' || !Number.isSafeInteger(node) || node < 0)
    return `has a node ${describeValue(node)} that is not an integer >= 0`;
  if (!Array.isArray(queues) || queues.length === 0)
    return `has queues ${describeValue(queues)} that are not a non-empty list`;
  for (const queue of queues as unknown[])
    if (!isQueueName(queue)) return `has a queue ${describeValue(queue)} that is not a queue name`;
  return { id, node, queues: queues as string[] };
}

/** The workflow place a job entry's meta (its JSON) names, if any (undefined too when it is malformed). */
export function workflowOfMeta(raw: string): WorkflowRef | undefined {
  try {
    const meta = JSON.parse(raw) as Meta | null;
    if (meta === null || typeof meta !== 'object' || meta.w === undefined) return undefined;
    const ref = workflowRef(meta.w);
    return typeof ref === 'string' ? undefined : ref;
  } catch {
    return undefined;
  }
}

/**
 * A job's entry fields. `stamped` false leaves `enqueuedAt` out of meta: a
 * workflow's later step gets it from the script that starts it (lib/workflow.lua).
 */
export function encodeJob(job: JobRecord | NewJob, stamped = true): EntryFields {
  const meta: Meta = stamped ? { o: job.options, e: job.enqueuedAt } : { o: job.options };
  if (job.replyTo !== undefined) {
    meta.r = job.replyTo;
    // This broker's waitForResults reads results announced inline (results.ts).
    meta.i = 1;
  }
  if (job.uniqueKey !== undefined) {
    meta.u = job.uniqueKey;
    const ttl = uniqueTtlMs(job);
    if (ttl > 0) meta.ut = ttl;
  }
  if (job.ownId === true) meta.x = 1;
  if (job.scheduledFor !== undefined) meta.s = job.scheduledFor;
  if (job.workflow !== undefined) meta.w = [job.workflow.id, job.workflow.node, [...job.workflow.queues]];
  return [
    'id',
    job.id,
    'task',
    job.task,
    'payload',
    Buffer.from(job.payload.buffer, job.payload.byteOffset, job.payload.byteLength),
    'attempt',
    String(job.attempt),
    'redeliveries',
    String(job.redeliveries),
    'meta',
    JSON.stringify(meta),
  ];
}

/** The unique key's time to live in whole ms as the scripts take it (0: held until the job ends). */
export function uniqueTtlMs(job: JobRecord): number {
  return job.uniqueTtl === undefined || !(job.uniqueTtl > 0) ? 0 : Math.max(1, Math.ceil(job.uniqueTtl));
}

/** Field name → value (the last one wins, as the Lua helpers read it). */
export function fieldMap(fields: readonly (string | Buffer)[]): Map<string, Buffer> {
  const map = new Map<string, Buffer>();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i];
    const value = fields[i + 1];
    if (name === undefined || value === undefined) continue; // a hole in a sparse array: no field
    map.set(name.toString(), Buffer.isBuffer(value) ? value : Buffer.from(value));
  }
  return map;
}

/** The ms timestamp part of a stream entry id. */
export function entryTime(entryId: string): number {
  return Number(entryId.split('-')[0]);
}

/** The due time carried by a timer marker, or undefined for a job entry. */
export function markerDue(fields: readonly (string | Buffer)[]): number | undefined {
  // A canonical job entry (the common case) has a non-empty task in fourth place: no Map needed.
  const task = fields[3];
  if (isCanonical(fields) && task !== undefined && task.length > 0) return undefined;
  const map = fieldMap(fields);
  if (map.get('id')?.length !== 0 || map.get('task')?.length !== 0) return undefined;
  const due = Number(map.get('meta')?.toString());
  return Number.isFinite(due) ? due : 0;
}

function count(map: Map<string, Buffer>, name: string, problems: string[]): number {
  const raw = map.get(name);
  if (raw === undefined) return 0;
  const n = Number(raw.toString());
  if (Number.isSafeInteger(n) && n >= 0) return n;
  problems.push(`field ${name} is not a count: ${JSON.stringify(raw.toString().slice(0, 40))}`);
  return 0;
}

/**
 * Decodes an entry into a job record. Never throws: what cannot be read is
 * named in `malformed` and the record is filled as well as possible (the
 * entry id stands in for a missing job id), so the entry can be dead-lettered.
 */
export function decodeJob(
  entryId: string,
  queue: string,
  fields: readonly (string | Buffer)[],
): { job: JobRecord; malformed?: string } {
  const fast = decodeCanonical(entryId, queue, fields);
  if (fast !== undefined) return { job: fast };
  const map = fieldMap(fields);
  const problems: string[] = [];
  const id = map.get('id')?.toString() || entryId;
  const task = map.get('task')?.toString() ?? '';
  if (task === '') problems.push('no task name');
  const payload = map.get('payload');
  if (payload === undefined) problems.push('no payload');
  let meta: Meta = {};
  const rawMeta = map.get('meta');
  if (rawMeta === undefined) {
    problems.push('no meta field');
  } else {
    try {
      const parsed: unknown = JSON.parse(rawMeta.toString());
      if (parsed === null || typeof parsed !== 'object') throw new TypeError('not an object');
      meta = parsed;
    } catch (err) {
      problems.push(`meta is not JSON: ${messageOf(err)}`);
    }
  }
  const job: JobRecord = {
    id,
    task,
    queue,
    payload:
      payload === undefined
        ? new Uint8Array(0)
        : new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength),
    attempt: count(map, 'attempt', problems),
    redeliveries: count(map, 'redeliveries', problems),
    options: meta.o === undefined ? {} : (meta.o as JobOptions),
    enqueuedAt: typeof meta.e === 'number' ? meta.e : entryTime(entryId),
  };
  const problem = readMeta(job, meta);
  if (problem !== undefined) {
    problems.push(problem);
    // Nothing of what the settlement would rely on is kept from a malformed entry.
    job.options = {};
    delete job.workflow;
  }
  // Written by the fetch script when a rate limit deferred the job to its slot (not canonical: the general path reads it).
  const slot = Number(map.get('slot')?.toString());
  if (Number.isFinite(slot) && slot > 0) job.rateSlot = slot;
  return problems.length > 0 ? { job, malformed: `unreadable entry ${entryId}: ${problems.join('; ')}` } : { job };
}

const NAMES = ['id', 'task', 'payload', 'attempt', 'redeliveries', 'meta'].map((n) => Buffer.from(n));

/** A small decimal count written by us or the Lua scripts, or -1 when the bytes are anything else. */
function smallCount(b: Buffer): number {
  if (b.length === 0 || b.length > 9) return -1;
  let n = 0;
  for (const byte of b) {
    const d = byte - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Exactly the six field names of encodeJob, in order, as Buffers (names distinct: each value is the one a lookup would find). */
function isCanonical(fields: readonly (string | Buffer)[]): boolean {
  if (fields.length !== 12) return false;
  return NAMES.every((expected, i) => {
    const name = fields[2 * i];
    return Buffer.isBuffer(name) && name.equals(expected);
  });
}

/**
 * The hot path: an entry with exactly the canonical field set in order (what
 * encodeJob and the scripts write) is read by position, the payload kept as
 * the Buffer the reply came in (no copy, no Map). Anything unusual returns
 * undefined and takes the general path, which names what is wrong.
 */
function decodeCanonical(entryId: string, queue: string, fields: readonly (string | Buffer)[]): JobRecord | undefined {
  if (!isCanonical(fields)) return undefined;
  return decodeValues(entryId, queue, fields, 1, 2);
}

/**
 * A job from the six canonical values found at `values[at]`, `values[at + step]`, …
 * (step 2: a field/value list; step 1: the fetch script's bare values), or
 * undefined when any of them is unusual (the general path then names it).
 */
function decodeValues(
  entryId: string,
  queue: string,
  values: readonly (string | Buffer)[],
  at: number,
  step: number,
): JobRecord | undefined {
  const id = values[at],
    task = values[at + step],
    payload = values[at + 2 * step];
  const attempt = values[at + 3 * step],
    redeliveries = values[at + 4 * step],
    rawMeta = values[at + 5 * step];
  if (
    !Buffer.isBuffer(id) ||
    !Buffer.isBuffer(task) ||
    !Buffer.isBuffer(payload) ||
    !Buffer.isBuffer(attempt) ||
    !Buffer.isBuffer(redeliveries) ||
    !Buffer.isBuffer(rawMeta)
  )
    return undefined;
  if (task.length === 0) return undefined;
  const att = smallCount(attempt);
  const red = smallCount(redeliveries);
  if (att < 0 || red < 0) return undefined;
  let meta: Meta;
  try {
    const parsed: unknown = JSON.parse(rawMeta.toString());
    if (parsed === null || typeof parsed !== 'object') return undefined;
    meta = parsed;
  } catch {
    return undefined;
  }
  const job: JobRecord = {
    id: id.length > 0 ? id.toString() : entryId,
    task: task.toString(),
    queue,
    payload: new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength),
    attempt: att,
    redeliveries: red,
    options: meta.o === undefined ? {} : (meta.o as JobOptions),
    enqueuedAt: typeof meta.e === 'number' ? meta.e : entryTime(entryId),
  };
  // Anything wrong: the general path names it.
  return readMeta(job, meta) === undefined ? job : undefined;
}

export type StreamKind = 'q' | 'r';

/**
 * A delivery from the fetch script's bare values of a canonical entry (id,
 * task, payload, attempt, redeliveries, meta from `values[at]` on). Values
 * the fast path cannot read go through the general decoder, rebuilt as fields.
 */
export function makeCanonicalDelivery(
  queue: string,
  kind: StreamKind,
  entryId: string,
  values: readonly Buffer[],
  at: number,
): Delivery {
  const job = decodeValues(entryId, queue, values, at, 1);
  if (job !== undefined) return { receipt: `${kind}:${entryId}`, queue, job };
  const fields: (string | Buffer)[] = [];
  NAMES.forEach((name, i) => {
    const value = values[at + i];
    // A value missing from the reply leaves its field out: the general decoder names it.
    if (value !== undefined) fields.push(name, value);
  });
  return makeDelivery(queue, kind, entryId, fields);
}

/** The receipt is the stream kind and the entry id: all a settlement needs (the queue is on the delivery). */
export function makeDelivery(
  queue: string,
  kind: StreamKind,
  entryId: string,
  fields: readonly (string | Buffer)[],
): Delivery {
  const { job, malformed } = decodeJob(entryId, queue, fields);
  return malformed === undefined
    ? { receipt: `${kind}:${entryId}`, queue, job }
    : { receipt: `${kind}:${entryId}`, queue, job, malformed };
}

/** The stream a receipt names: 'r' for :rd, else 'q' (read per settlement: no allocation). */
export function receiptKind(receipt: string): StreamKind {
  return receipt.charCodeAt(0) === 0x72 && receipt.charCodeAt(1) === 0x3a ? 'r' : 'q';
}

/** The entry id a receipt names. */
export function receiptEntryId(receipt: string): string {
  return receipt.slice(2);
}

// int64AsType: a record a Lua script packs (cmsgpack: recoverEntries-n.lua) holds epoch ms as 64-bit integers.
const resultPackr = new Packr({ useRecords: false, moreTypes: true, mapsAsObjects: true, int64AsType: 'number' });

export function encodeResult(record: ResultRecord): Buffer {
  return resultPackr.pack(record);
}

/**
 * A stored result read back from the key `prefix + id` (joined only for an
 * error: results are read by the thousand). Bytes another program wrote
 * there, or a record cut short, are refused naming the key: handed on as
 * they decode, a number or a map without a state read as a job with no outcome.
 */
export function decodeResult(bytes: Buffer, prefix: string, id = ''): ResultRecord {
  let record: unknown;
  try {
    record = resultPackr.unpack(bytes);
  } catch (err) {
    throw new BrokerRefusedError(`the result stored at ${prefix}${id} does not decode: ${messageOf(err)}`, {
      cause: err,
    });
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record))
    throw new BrokerRefusedError(`the result stored at ${prefix}${id} is ${valueKind(record)}, not a result record`);
  const state = (record as { state?: unknown }).state;
  if (!isJobState(state))
    throw new BrokerRefusedError(
      `the result stored at ${prefix}${id} has no job state (state: ${describeValue(state)})`,
    );
  return record as ResultRecord;
}

/** What a decoded value is, in a few words (the value itself may be long). */
function valueKind(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
