import { createHash } from 'node:crypto';
import { OptionError, messageOf } from '../errors.js';
import {
  checkJobOptionFields,
  checkJobRecordOptions,
  checkKnownKeys,
  checkQueueName,
  type BackoffInput,
} from '../job-option-checks.js';
import type { JobOptions } from '../job-types.js';
import { decodeBody, encodeBody } from '../protocol/codec.js';
import { checkDuration, type Bad } from '../util/units.js';
import { cronRule, everyRule, type Misfire, type TickRule } from './ticks.js';

export type { Misfire };

/** The options of the jobs a schedule entry enqueues (those of `Client.enqueue` that make sense for a tick). */
export interface ScheduleJobOptions {
  /**
   * The queue the jobs go to.
   * @defaultValue `"default"`
   */
  queue?: string;
  /**
   * Retries after the first attempt.
   * @defaultValue the task's own, else 0
   */
  retries?: number;
  /**
   * How retries wait (durations in ms or strings like "30s").
   * @defaultValue the task's own, else exponential from 1 s
   */
  backoff?: BackoffInput;
  /**
   * true: store no result.
   * @defaultValue the task's own `ignoreResult`, else false
   */
  ignoreResult?: boolean;
  /**
   * How long the results are kept (ms or "1h").
   * @defaultValue the worker's `resultTtl`
   */
  resultTtl?: number | string;
  /**
   * Hard time limit per job (ms or "30s").
   * @defaultValue the task's own, else the worker's
   */
  timeLimit?: number | string;
  /**
   * Soft time limit per job (ms or "30s", less than `timeLimit`).
   * @defaultValue the task's own, else the worker's
   */
  softTimeLimit?: number | string;
}

/** One entry of `defineSchedule`: a task enqueued at each tick, given by `every` or by `cron` (exactly one). */
export interface ScheduleEntryInput {
  /** The task to enqueue. */
  task: string;
  /**
   * Its arguments (msgpack-encodable).
   * @defaultValue `[]`
   */
  args?: unknown[];
  /**
   * The jobs' options.
   * @defaultValue none
   */
  options?: ScheduleJobOptions;
  /**
   * A tick every this long (ms or "30s", at least 1 s), at whole multiples of it since the epoch (on the broker's clock).
   * @defaultValue none: give `cron` instead
   */
  every?: number | string;
  /**
   * A cron expression of 5 fields (minute first) or 6 (second first), e.g. `"0 3 * * *"`.
   * @defaultValue none: give `every` instead
   */
  cron?: string;
  /**
   * The IANA time zone the cron expression is read in (DST handled as cron does).
   * @defaultValue `"UTC"`
   */
  tz?: string;
  /**
   * Ticks missed while no node ran: `'once'` fires one job for all of them,
   * `'skip'` none (the next regular tick fires), `'all'` one per missed tick
   * (the latest 100 at most).
   * @defaultValue `'once'`
   */
  misfire?: Misfire;
}

/** A checked entry, as nodes share it through the broker. */
export interface ScheduleEntry {
  /** The entry's name. */
  readonly name: string;
  /** The task its jobs run. */
  readonly task: string;
  /** msgpack of the argument array. */
  readonly payload: Uint8Array;
  /** The queue its jobs go to. */
  readonly queue: string;
  /** Its jobs' options (durations in ms). */
  readonly options: JobOptions;
  /** The period in ms (an `every` entry). */
  readonly every?: number;
  /** The cron expression (a `cron` entry). */
  readonly cron?: string;
  /** The time zone of the cron expression (a `cron` entry). */
  readonly tz?: string;
  /** What it does with missed ticks. */
  readonly misfire: Misfire;
  /** When its ticks fall. */
  readonly rule: TickRule;
  /** The definition as stored in the broker (JSON); nodes compare `hash` to see a change. */
  readonly definition: string;
  /** A hash of `definition`. */
  readonly hash: string;
}

const SCHEDULE = Symbol.for('prefork.schedule');

/** What `defineSchedule` returns: the Worker's `schedule` option, and the default export of a `--schedule` module. */
export interface Schedule {
  /** Marks an object made by `defineSchedule` (the Worker checks it). */
  readonly [SCHEDULE]: true;
  /** The checked entries, by name. */
  readonly entries: ReadonlyMap<string, ScheduleEntry>;
}

const ENTRY_KEYS = new Set(['task', 'args', 'options', 'every', 'cron', 'tz', 'misfire']);
const OPTION_KEYS = new Set(['queue', 'retries', 'backoff', 'ignoreResult', 'resultTtl', 'timeLimit', 'softTimeLimit']);
const MISFIRES: readonly Misfire[] = ['once', 'skip', 'all'];
/** The shortest `every`: a tick claims in Redis, so shorter would cost an idle cluster more than it is worth. */
const MIN_EVERY_MS = 1000;
/** An entry's name: it is part of a Redis key and a CLI argument. */
const ENTRY_NAME = /^[A-Za-z0-9_.:-]{1,200}$/;

/**
 * Declares periodic tasks: entries by name, each a task enqueued at every
 * tick of `every` or `cron`. Every node given the same schedule runs it and
 * each tick fires once per cluster. Throws an OptionError naming the entry
 * and the problem (a cron that does not parse or matches no date, an unknown
 * time zone, both or neither of every/cron, `every` under 1 s).
 */
export function defineSchedule(entries: Record<string, ScheduleEntryInput>): Schedule {
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries))
    throw new OptionError('entries', entries, 'an object of entries by name', 'defineSchedule()');
  const checked = new Map<string, ScheduleEntry>();
  for (const name of Object.keys(entries)) checked.set(name, checkEntry(name, entries[name]));
  return Object.freeze({ [SCHEDULE]: true as const, entries: checked });
}

export function isSchedule(value: unknown): value is Schedule {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SCHEDULE] === true;
}

function checkEntry(name: string, input: unknown): ScheduleEntry {
  const bad: Bad = (option, value, expected) => {
    throw new OptionError(option, value, expected, `defineSchedule(): entry ${JSON.stringify(name)}`);
  };
  if (!ENTRY_NAME.test(name)) bad('name', name, 'a name of 1 to 200 letters, digits, "_", ".", ":" or "-"');
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    bad('entry', input, '{ task, args?, options?, every? | cron?, tz?, misfire? }');
  const e = input as Record<string, unknown>;
  checkKnownKeys(e, ENTRY_KEYS, 'schedule entry option', bad);
  if (typeof e.task !== 'string' || e.task === '') bad('task', e.task, 'a task name');
  const args = e.args ?? [];
  if (!Array.isArray(args)) bad('args', args, 'an array of arguments');
  let payload: Buffer;
  try {
    payload = encodeBody(args);
  } catch (err) {
    bad('args', args, `arguments msgpack can encode (${err instanceof Error ? err.message : String(err)})`);
  }
  const { queue, options } = checkJobOptions(e.options ?? {}, bad);
  if (e.every !== undefined && e.cron !== undefined)
    bad('every', e.every, 'exactly one of every and cron (cron is given too)');
  if (e.every === undefined && e.cron === undefined)
    bad('every', undefined, 'exactly one of every and cron (neither is given)');
  const misfire = e.misfire ?? 'once';
  if (!MISFIRES.includes(misfire as Misfire)) bad('misfire', misfire, "'once', 'skip' or 'all'");
  const stored: StoredDefinition = {
    task: e.task,
    payload: payload.toString('base64'),
    queue,
    options,
    misfire: misfire as Misfire,
  };
  if (e.every !== undefined) {
    if (e.tz !== undefined) bad('tz', e.tz, 'no time zone with every (ticks fall at multiples of it since the epoch)');
    stored.every = checkEvery(e.every, bad);
  } else {
    if (typeof e.cron !== 'string') bad('cron', e.cron, 'a cron expression string');
    stored.cron = e.cron;
    stored.tz = checkTz(e.tz, bad);
  }
  return entryFromStored(name, stored, JSON.stringify(stored), bad);
}

/** `every` as whole ms, at least MIN_EVERY_MS. */
function checkEvery(value: unknown, bad: Bad): number {
  const every = Math.round(checkDuration('every', value, 'delay', bad));
  if (every < MIN_EVERY_MS) bad('every', value, 'at least 1 s');
  return every;
}

/** A cron entry's time zone (UTC when none is given). */
function checkTz(value: unknown, bad: Bad): string {
  if (value !== undefined && (typeof value !== 'string' || !isTimeZone(value)))
    bad('tz', value, 'an IANA time zone such as "Europe/Berlin"');
  return value ?? 'UTC';
}

/** The definition as JSON in the broker: enough for another node to run the entry. */
interface StoredDefinition {
  task: string;
  /** base64 of the msgpack arguments. */
  payload: string;
  queue: string;
  options: JobOptions;
  misfire: Misfire;
  every?: number;
  cron?: string;
  tz?: string;
}

/**
 * An entry from its stored definition, `definition` being its text: the
 * hash is of the text as stored (JSON.stringify of a parsed object could
 * order keys differently).
 */
function entryFromStored(name: string, stored: StoredDefinition, definition: string, bad: Bad): ScheduleEntry {
  let rule: TickRule;
  if (stored.every !== undefined) {
    rule = everyRule(stored.every);
  } else {
    const cron = stored.cron ?? '';
    const fields = cron.trim().split(/\s+/).length;
    if (fields !== 5 && fields !== 6) bad('cron', cron, 'a cron expression of 5 fields, or 6 with seconds first');
    try {
      rule = cronRule(cron, stored.tz ?? 'UTC');
    } catch (err) {
      bad('cron', cron, `a cron expression that parses (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  const entry: ScheduleEntry = {
    name,
    task: stored.task,
    payload: Buffer.from(stored.payload, 'base64'),
    queue: stored.queue,
    options: stored.options,
    misfire: stored.misfire,
    rule,
    definition,
    hash: createHash('sha1').update(definition).digest('hex'),
    ...(stored.every !== undefined ? { every: stored.every } : { cron: stored.cron, tz: stored.tz }),
  };
  // A date no year has (February 30, April 31) parses, and would never fire, without a word.
  if (entry.cron !== undefined && rule.next(Date.now()) === undefined)
    bad('cron', entry.cron, 'a cron expression that matches some date (this one never does)');
  return Object.freeze(entry);
}

/**
 * An entry from the definition another node stored (`definition`, JSON):
 * a node adopts a changed entry without a restart. Throws an OptionError
 * when it does not read (written by a version of prefork this one does not know).
 */
export function entryFromDefinition(name: string, definition: string): ScheduleEntry {
  const bad: Bad = (option, value, expected) => {
    throw new OptionError(option, value, expected, `stored schedule entry ${JSON.stringify(name)}`);
  };
  let stored: unknown;
  try {
    stored = JSON.parse(definition);
  } catch {
    bad('definition', definition, 'JSON');
  }
  const s = stored as Partial<StoredDefinition> | null;
  if (
    s === null ||
    typeof s !== 'object' ||
    typeof s.task !== 'string' ||
    typeof s.payload !== 'string' ||
    typeof s.queue !== 'string' ||
    typeof s.options !== 'object' ||
    !MISFIRES.includes(s.misfire as Misfire) ||
    (typeof s.every !== 'number') === (typeof s.cron !== 'string')
  )
    bad('definition', definition, 'a schedule entry definition');
  // Another program (or a newer prefork) may have written it: its values pass the checks a
  // defineSchedule entry's do, or an `every` of 1 ms would have every node claim each millisecond.
  const d = s as StoredDefinition;
  if (d.task === '') bad('task', d.task, 'a task name');
  checkStoredPayload(d.payload, bad);
  checkQueueName('queue', d.queue, bad);
  checkJobRecordOptions(d.options, bad);
  if (d.every !== undefined && checkEvery(d.every, bad) !== d.every) bad('every', d.every, 'whole milliseconds');
  if (d.cron !== undefined) checkTz(d.tz, bad);
  return entryFromStored(name, d, definition, bad);
}

/**
 * A stored entry's arguments: base64 of a msgpack array, as defineSchedule
 * writes them. Anything else would enqueue, at every tick, a job whose
 * payload does not decode (straight to the dead set, unrun).
 */
function checkStoredPayload(payload: string, bad: Bad): void {
  const bytes = Buffer.from(payload, 'base64');
  // Buffer.from skips what is not base64: text that does not come back the same is not base64.
  if (bytes.toString('base64') !== payload) bad('payload', payload, 'base64 of the msgpack arguments');
  let args: unknown;
  try {
    args = decodeBody(bytes);
  } catch (err) {
    bad('payload', payload, `base64 of the msgpack arguments (${messageOf(err)})`);
  }
  if (!Array.isArray(args)) bad('payload', payload, 'base64 of a msgpack array of arguments');
}

/** The job options of an entry, checked as `Client.enqueue` checks them. */
function checkJobOptions(input: unknown, bad: Bad): { queue: string; options: JobOptions } {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    bad('options', input, 'an object of job options');
  const o = input as Record<string, unknown>;
  checkKnownKeys(o, OPTION_KEYS, 'schedule job option', bad, 'options.');
  const { options, queue } = checkJobOptionFields(o, bad, 'options.');
  return { queue: queue ?? 'default', options };
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
