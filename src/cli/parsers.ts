import { InvalidArgumentError } from 'commander';
import { PAGE_LIMIT_EXPECTED, parsePageLimit } from '../broker/job-page-checks.js';
import type { ListedState } from '../broker/types.js';
import { checkLease, checkNamespace } from '../broker/broker-options.js';
import { maskUrl } from '../broker/mask-url.js';
import { checkBrokerUrl } from '../broker/broker-url.js';
import { checkAuthToken } from '../dashboard/options.js';
import { describeValue, messageOf } from '../errors.js';
import {
  checkBackoff,
  checkDelay,
  checkEta,
  checkJobId,
  checkQueueName,
  checkRateLimit,
  checkResultTtl,
} from '../job-option-checks.js';
import type { BackoffOptions } from '../job-types.js';
import { LOG_LEVELS } from '../logger.js';
import { UsageError } from './usage-error.js';
import { NODE_EVENT_TYPES, type NodeEventType } from '../events/node-event.js';
import { JOB_LOG_LEVELS, type JobLogLevel } from '../consumer/job-log.js';
import { PREFETCH_MAX } from '../consumer/prefetch.js';
import { MAX_QUEUE_WEIGHT, parseQueues, QUEUE_ORDERS, type QueueOrder } from '../consumer/queue-selection.js';
import {
  checkDuration,
  checkInteger,
  checkSize,
  DURATION_SPELLING,
  MAX_PROCESSES,
  parseAutoscale,
  parseInteger,
  splitDuration,
  type Bad,
} from '../util/units.js';

/**
 * Flag parsers for commander. Each throws InvalidArgumentError with what was
 * expected; commander prefixes the flag and the value, and main.ts turns it
 * into exit code 2.
 */
export function positiveInt(value: string): number {
  return integer(value, 1);
}

/** An integer flag in [min, max] (max at most 2^53-1: past it a number is no longer exact, and the broker's scripts refuse it). */
function integer(value: string, min: number, max?: number): number {
  return checkInteger('', parseInteger(value) ?? value, invalid, min, max);
}

/** A number of children (-c, --max-concurrency, demo's -c): 1 to MAX_PROCESSES. */
export function processCount(value: string): number {
  return integer(value, 1, MAX_PROCESSES);
}

/** --prefetch-multiplier: 1 to PREFETCH_MAX (the most a self-sized node holds in all, here per child). */
export function prefetchMultiplier(value: string): number {
  return integer(value, 1, PREFETCH_MAX);
}

/** A page size for listJobs: 1 to PAGE_LIMIT_MAX. */
export function pageLimit(value: string): number {
  const limit = parsePageLimit(value);
  if (limit === undefined) throw new InvalidArgumentError(`expected ${PAGE_LIMIT_EXPECTED}`);
  return limit;
}

const LISTED_STATES: readonly ListedState[] = ['waiting', 'delayed', 'dead'];

/** Which of a queue's jobs `prefork jobs` lists. */
export function listedState(value: string): ListedState {
  const found = LISTED_STATES.find((s) => s === value);
  if (found === undefined) throw new InvalidArgumentError(`expected ${LISTED_STATES.join(', ')}`);
  return found;
}

export function nonNegativeInt(value: string): number {
  return integer(value, 0);
}

/** A TCP port to listen on: 0 to 65535 (0: any free port). */
export function port(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) > 65535)
    throw new InvalidArgumentError('expected a port number from 0 to 65535');
  return Number(value);
}

/** A comma-separated list of event types (job-succeeded,process-down,...). */
export function eventTypes(value: string): NodeEventType[] {
  const types = value.split(',').map((t) => t.trim());
  const bad = types.filter((t) => !(NODE_EVENT_TYPES as readonly string[]).includes(t));
  if (bad.length > 0 || types.length === 0)
    throw new InvalidArgumentError(`expected event types among ${NODE_EVENT_TYPES.join(', ')}`);
  return types as NodeEventType[];
}

/**
 * The shared checks report through this: commander already names the flag
 * and the value. A duration typed here needs its unit (withUnit), so "in ms"
 * is not offered.
 */
const invalid: Bad = (_flag, _value, expected) => {
  throw new InvalidArgumentError(
    `expected ${expected.replace(DURATION_SPELLING, 'with its unit, e.g. "30s", "500ms" or "5m"')}`,
  );
};

/**
 * Every duration typed on the command line carries its unit ("30s",
 * "500ms"); only 0 may go without. A bare number means seconds to people
 * who come from Celery (`--time-limit 300`, `result_expires = 86400`) or
 * Sidekiq (`-t 25`), and milliseconds to the library's options: read as
 * either, it is wrong for someone, silently (`--result-ttl 86400` kept
 * results 86 s). So it is refused, and the message shows both spellings.
 */
function withUnit(value: string, part?: string): string {
  const text = splitDuration(value);
  if (text !== undefined && text.unit === undefined && text.amount !== 0) {
    const n = value.trim();
    throw new InvalidArgumentError(
      `expected ${part === undefined ? '' : `${part} to be `}a duration with its unit: ${n}s for seconds or ${n}ms for milliseconds (also m, h, d)`,
    );
  }
  return value;
}

/** A delay before a job runs (--delay): 0 up to 100 years, checked here so the message shows it as typed. */
export function delay(value: string): number {
  return checkDelay('', withUnit(value), invalid);
}

/** A positive duration short enough for a timer (a wait, a read interval). */
export function timerDuration(value: string): number {
  return checkDuration('', withUnit(value), 'timer', invalid);
}

/** A time limit (--time-limit, --soft-time-limit): a timerDuration. */
export const timeLimit = timerDuration;

/** A duration >= 0 short enough for a timer (a grace period). */
export function waitDuration(value: string): number {
  return checkDuration('', withUnit(value), 'wait', invalid);
}

/** A positive duration up to 100 years (how long something is kept). */
export function expiry(value: string): number {
  return checkDuration('', withUnit(value), 'expiry', invalid);
}

/** A rate limit such as 100/s, 10/m or 1000/h. */
export function rateLimit(value: string): string {
  return checkRateLimit('', value, invalid);
}

export function size(value: string): number {
  return checkSize('', value, invalid);
}

/** What --autoscale and `control autoscale` take. */
export const AUTOSCALE_ARGUMENT = `MAX,MIN integers with 1 <= MAX <= ${MAX_PROCESSES} and 0 <= MIN <= MAX, e.g. 10,3`;

export function autoscale(value: string): string {
  if (parseAutoscale(value) === undefined) throw new InvalidArgumentError(`expected ${AUTOSCALE_ARGUMENT}`);
  return value;
}

export function strategy(value: string): 'fair' | 'fcfs' {
  if (value !== 'fair' && value !== 'fcfs') throw new InvalidArgumentError('expected fair or fcfs');
  return value;
}

export function queueOrder(value: string): QueueOrder {
  if (!(QUEUE_ORDERS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected ${QUEUE_ORDERS.join(', ')}`);
  return value as QueueOrder;
}

export function queues(value: string): string {
  try {
    parseQueues(value);
  } catch {
    throw new InvalidArgumentError(
      `expected name[:weight],... with names of letters, digits, _ - . and integer weights from 1 to ${MAX_QUEUE_WEIGHT}`,
    );
  }
  return value;
}

export function logLevel(value: string): string {
  if (!LOG_LEVELS.includes(value)) throw new InvalidArgumentError(`expected one of ${LOG_LEVELS.join(', ')}`);
  return value;
}

export function jobLogLevel(value: string): JobLogLevel {
  if (!(JOB_LOG_LEVELS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected ${JOB_LOG_LEVELS.join(' or ')}`);
  return value as JobLogLevel;
}

/** A node flag for the children (`--node-arg=--import=tsx`, or `--node-arg "--import tsx"`), collected over repeats. */
export function nodeArg(value: string, previous: string[]): string[] {
  const parts = value.trim().split(/\s+/);
  if (value.trim() === '' || !(parts[0] ?? '').startsWith('-'))
    throw new InvalidArgumentError('expected a node flag such as --import=tsx');
  return [...previous, ...parts];
}

/** The broker flag, as commander names it in its messages. */
export const BROKER_FLAG = '-b, --broker <url>';

/**
 * A broker URL (--broker): what checkBrokerUrl takes, as $PREFORK_BROKER_URL
 * is. Refused as commander would refuse it, but with its password masked:
 * commander's own message shows the value as typed.
 */
export function brokerUrl(value: string): string {
  checkBrokerUrl(value, (_option, _value, expected) => {
    throw new UsageError(`option '${BROKER_FLAG}' argument '${maskUrl(value)}' is invalid. expected ${expected}`);
  });
  return value;
}

/** The dashboard's --auth-token (or $PREFORK_DASHBOARD_TOKEN: commander names the variable): not empty. */
export function authToken(value: string): string {
  return checkAuthToken('', value, invalid) ?? value;
}

/** The broker's key namespace (--namespace): what checkNamespace takes. */
export function namespace(value: string): string {
  return checkNamespace('', value, invalid);
}

/** A node's lease (--lease): at least 1 s. */
export function lease(value: string): number {
  return checkLease('', withUnit(value), invalid);
}

/** How long results are kept (--result-ttl). */
export function resultTtl(value: string): number {
  return checkResultTtl('', withUnit(value), invalid);
}

export function queueName(value: string): string {
  return checkQueueName('', value, invalid);
}

/**
 * A task argument on the command line: JSON, or a bare word taken as a
 * string. One that looks like JSON (starts with {, [ or ") but does not parse
 * is a mistake, not a string: it would reach the task as text.
 */
export function jsonArg(value: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    if (/^\s*[[{"]/.test(value))
      throw new UsageError(
        `argument '${value}' is invalid. it looks like JSON but does not parse (${messageOf(err)}); for a string that starts so, quote it as JSON: '${JSON.stringify(value)}'`,
      );
    return value;
  }
  // JSON.parse reads 1e400 as Infinity: the task would get a number nobody typed, shown as null in its result.
  if (holdsInfinity(parsed))
    throw new UsageError(
      `argument '${value}' is invalid. it holds a number too large for a double; to pass it as text, quote it as JSON`,
    );
  return parsed;
}

/** Whether parsed JSON holds a non-finite number anywhere (walked without recursion: nesting may be deep). */
function holdsInfinity(parsed: unknown): boolean {
  const stack: unknown[] = [parsed];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'number' && !Number.isFinite(item)) return true;
    if (typeof item === 'object' && item !== null) for (const inner of Object.values(item)) stack.push(inner);
  }
  return false;
}

/**
 * Epoch milliseconds below this are epoch seconds in all likelihood (as
 * `date +%s` prints them): as ms they name a moment in 1970–1973, and the
 * job would run at once.
 */
const EPOCH_SECONDS_BELOW = 100_000_000_000;

/**
 * An ISO 8601 date (UTC midnight) or date-time (with Z or an offset; without
 * one, local time), as ECMAScript's Date reads them. Date.parse alone reads
 * far more, wrongly for a due time: "-5" and "1 2" as days of 2001, and a
 * day a month does not have (2030-02-30) as one in the next month.
 */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?)?$/i;

/** Epoch ms of an ISO_DATE_TIME whose day exists, else NaN. */
function isoTime(value: string): number {
  const m = ISO_DATE_TIME.exec(value);
  if (m === null) return NaN;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return NaN;
  return Date.parse(value);
}

/** An absolute time: an ISO 8601 date-time or epoch milliseconds. */
export function eta(value: string): number {
  const text = value.trim();
  const bare = /^\d+$/.test(text);
  const ms = bare ? Number(text) : isoTime(text);
  if (!Number.isFinite(ms))
    throw new InvalidArgumentError('expected an ISO date-time such as 2030-01-31T09:00:00Z, or epoch milliseconds');
  if (bare && ms < EPOCH_SECONDS_BELOW)
    throw new InvalidArgumentError(
      `expected epoch milliseconds or an ISO date-time: ${text} would be in 1970-1973; for epoch seconds write ${text}000`,
    );
  return checkEta('eta', ms, invalidPart);
}

/**
 * How retries wait: `TYPE[:DELAY[:CAP]]` (e.g. `fixed:5s`, `exponential:1s:10m`)
 * or the JSON of the enqueue option (`{"type":"fixed","delay":"5s","jitter":false}`).
 */
export function backoff(value: string): BackoffOptions {
  let input: unknown;
  if (value.trim().startsWith('{')) {
    try {
      input = JSON.parse(value);
    } catch (err) {
      throw new InvalidArgumentError(`expected TYPE[:DELAY[:CAP]] or a JSON object (${messageOf(err)})`);
    }
  } else {
    const [type, delay, cap, ...rest] = value.split(':');
    if (rest.length > 0 || (type !== 'fixed' && type !== 'exponential'))
      throw new InvalidArgumentError('expected TYPE[:DELAY[:CAP]] with TYPE fixed or exponential, e.g. fixed:5s');
    input = { type, ...(delay ? { delay } : {}), ...(cap ? { cap } : {}) };
  }
  // Typed as text, the backoff's durations carry their unit too (a JSON number stays ms, as in the library).
  if (typeof input === 'object' && input !== null)
    for (const part of ['delay', 'cap'] as const) {
      const given: unknown = Object.hasOwn(input, part) ? (input as Record<string, unknown>)[part] : undefined;
      if (typeof given === 'string') withUnit(given, part);
    }
  return checkBackoff('backoff', input, invalidPart);
}

/** The task argument of `enqueue`: a non-empty name (the library would report it as an option, `name`). */
export function taskName(value: string): string {
  if (value === '') throw new InvalidArgumentError('expected a task name');
  return value;
}

/** A job id: of your own (`--id`), or one to look up or act on (`result`, `revoke`, `dead retry|delete`). */
export function jobId(value: string): string {
  return checkJobId('id', value, invalid);
}

/** Job ids of a variadic argument (`<ids...>`), each checked by jobId. */
export function jobIds(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), jobId(value)];
}

/** --node: a node's name or id; an empty one names none (events would show nothing, control would find no node). */
export function nodeName(value: string): string {
  if (value === '') throw new InvalidArgumentError("expected a node's name or id (see prefork inspect nodes)");
  return value;
}

export function uniqueKey(value: string): string {
  if (value === '') throw new InvalidArgumentError('expected a non-empty key');
  return value;
}

/** As `invalid`, naming the part of a compound value that is wrong (backoff.delay: "delay"). */
const invalidPart: Bad = (option, value, expected) => {
  const field = option.includes('.') ? `${option.slice(option.indexOf('.') + 1)} ` : '';
  throw new InvalidArgumentError(`expected ${field}${field ? 'to be ' : ''}${expected} (got ${describeValue(value)})`);
};
