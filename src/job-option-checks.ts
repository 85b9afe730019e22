import { OptionError } from './errors.js';
import type { BackoffOptions, JobOptions } from './job-types.js';
import { checkDuration, checkInteger, checkRate, MAX_DELAY_MS, type Bad } from './util/units.js';

export type { Bad } from './util/units.js';

/**
 * Checks of the per-job options shared by `Client.enqueue`, `defineSchedule` and
 * `defineTasks` (each reports a bad value its own way through `bad`). Kept
 * free of package imports at run time (errors.ts and util/ import none; the types import is erased): task modules load it through 'prefork/task'.
 */

/** Largest epoch ms a Date can hold. */
const MAX_EPOCH_MS = 8.64e15;

/** A queue name's characters: no ":" (nor braces or spaces), so it can never spell a Redis key prefix or hash tag. */
const QUEUE_NAME = /^[A-Za-z0-9_.-]+$/;

/** A queue name, checked the same way by the Client, the Worker, the CLI and both brokers. */
export function checkQueueName(option: string, value: unknown, bad: Bad): string {
  if (!isQueueName(value)) bad(option, value, 'a queue name of letters, digits, "_", "-" or "."');
  return value;
}

/** checkQueueName's rule, as a test (lua/lib/workflow.lua wfRefOf has its copy). */
export function isQueueName(value: unknown): value is string {
  return typeof value === 'string' && QUEUE_NAME.test(value);
}

/** A lone UTF-16 surrogate (with `u`, a pair is one code point and does not match). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A string Redis stores as given: well-formed Unicode. A lone surrogate is
 * sent as U+FFFD, so two strings differing only there would be one key
 * (one job id, one unique key) on Redis and two on the memory broker.
 */
export function isWellFormed(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/**
 * A job id, checked the same way wherever one comes in (an enqueue's own id,
 * a lookup, a revoke, the CLI, the dashboard): any non-empty string of
 * well-formed Unicode (isWellFormed). White space counts: a job enqueued
 * with id " " can be looked up as " ".
 */
export function checkJobId(option: string, value: unknown, bad: Bad): string {
  if (!isJobId(value)) bad(option, value, 'a non-empty job id (well-formed Unicode: no lone surrogate)');
  return value;
}

/** checkJobId's rule, as a test. */
export function isJobId(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && isWellFormed(value);
}

/**
 * Refuses the first key of `options` that is not in `known`, naming it and
 * the known ones: a misspelt option would otherwise be silently ignored.
 * `what` names the set ("Client option"); `prefix` qualifies nested keys.
 */
export function checkKnownKeys(options: object, known: ReadonlySet<string>, what: string, bad: Bad, prefix = ''): void {
  for (const key of Object.keys(options)) {
    if (!known.has(key))
      bad(
        `${prefix}${key}`,
        (options as Record<string, unknown>)[key],
        `a known ${what}: ${[...known].join(', ')} (unknown option "${key}")`,
      );
  }
}

const WAIT_KEYS: ReadonlySet<string> = new Set(['timeout']);

/** The options of a wait for a result (`handle.result()`, a workflow's): checked, then their timeout. */
export function waitTimeout(options: unknown, bad: Bad): number | string | undefined {
  if (typeof options !== 'object' || options === null) bad('options', options, 'an object: { timeout? }');
  checkKnownKeys(options, WAIT_KEYS, 'result() option', bad);
  return (options as { timeout?: number | string }).timeout;
}

/** The usual Bad: an OptionError (defineTasks reports its own way). */
export const throwOptionError: Bad = (option, value, expected) => {
  throw new OptionError(option, value, expected);
};

/** The backoff of a job or a task as given: durations in ms or strings like "30s". */
export interface BackoffInput {
  /**
   * 'exponential': delay × 2^attempt; 'fixed': delay every time.
   * @defaultValue 'exponential'
   */
  type?: 'exponential' | 'fixed';
  /**
   * The first delay.
   * @defaultValue 1 s
   */
  delay?: number | string;
  /**
   * The largest delay (up to 100 years).
   * @defaultValue 10 minutes, or `delay` when that is longer
   */
  cap?: number | string;
  /**
   * Draw each delay from [delay/2, delay], so retries of a burst spread out.
   * A fixed backoff waits its delay exactly unless this is true.
   * @defaultValue true for 'exponential', false for 'fixed'
   */
  jitter?: boolean;
}

const BACKOFF_KEYS = new Set(['type', 'delay', 'cap', 'jitter']);

/** A time limit: positive, and short enough for a timer (about 24.8 days). */
export function checkTimeLimit(option: string, value: unknown, bad: Bad): number {
  return checkDuration(option, value, 'timer', bad);
}

/** A delay before a job runs (or reruns): >= 0, up to MAX_DELAY_MS. It waits in the broker, not in a timer. */
export function checkDelay(option: string, value: unknown, bad: Bad): number {
  return checkDuration(option, value, 'delay', bad);
}

/** An absolute due time: a valid Date or epoch ms. */
export function checkEta(option: string, value: unknown, bad: Bad): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || Math.abs(ms) > MAX_EPOCH_MS)
    bad(option, value, 'a valid Date or epoch milliseconds');
  return Math.round(ms);
}

/** How long a result is kept: positive, up to 100 years, in whole ms (Redis takes integer expiries). */
export function checkResultTtl(option: string, value: unknown, bad: Bad): number {
  return Math.max(1, Math.round(checkDuration(option, value, 'expiry', bad)));
}

/** A job record's resultTtl as checkResultTtl leaves it: whole ms in (0, 100 years]. */
export function isResultTtl(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value <= MAX_DELAY_MS;
}

/**
 * How long the brokers keep a job's results: its own resultTtl (a Client's),
 * else the broker's. The Consumer dead-letters a job whose resultTtl is not
 * one; this only keeps another caller's from failing a batch of writes.
 */
export function resultTtlOf(options: JobOptions, brokerTtl: number): number {
  return isResultTtl(options.resultTtl) ? options.resultTtl : brokerTtl;
}

/** A rate limit of a task or a job: "100/s", "10/m", "1000/h", kept as its normalized text. */
export function checkRateLimit(option: string, value: unknown, bad: Bad): string {
  return checkRate(option, value, bad).text;
}

export function checkRetries(option: string, value: unknown, bad: Bad): number {
  return checkInteger(option, value, bad, 0);
}

/** `{ type, delay, cap, jitter }`, unknown keys rejected, durations turned into ms. */
export function checkBackoff(option: string, value: unknown, bad: Bad): BackoffOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    bad(option, value, "{ type: 'exponential' | 'fixed', delay, cap, jitter }");
  const input = value as Record<string, unknown>;
  checkKnownKeys(input, BACKOFF_KEYS, 'backoff option', bad, `${option}.`);
  const out: BackoffOptions = {};
  if (input.type !== undefined) {
    if (input.type !== 'exponential' && input.type !== 'fixed')
      bad(`${option}.type`, input.type, "'exponential' or 'fixed'");
    out.type = input.type;
  }
  if (input.delay !== undefined) out.delay = checkDelay(`${option}.delay`, input.delay, bad);
  if (input.cap !== undefined) out.cap = checkDelay(`${option}.cap`, input.cap, bad);
  if (input.jitter !== undefined) {
    if (typeof input.jitter !== 'boolean') bad(`${option}.jitter`, input.jitter, 'true or false');
    out.jitter = input.jitter;
  }
  return out;
}

/** Both limits given: the soft one must come first, or it never fires. */
export function checkLimitOrder(
  timeLimit: number | undefined,
  softTimeLimit: number | undefined,
  softInput: unknown,
  option: string,
  bad: Bad,
): void {
  if (timeLimit !== undefined && softTimeLimit !== undefined && softTimeLimit >= timeLimit)
    bad(option, softInput, `less than timeLimit (${timeLimit} ms)`);
}

/**
 * The fields of a job's options that a Client's job, a schedule entry's job
 * and a task definition share, checked in one order (the first bad one is
 * reported), each named `prefix` + its key. Only the keys given are set; the
 * caller applies its own defaults, and refuses the keys it does not take
 * (checkKnownKeys) before this runs. `queue` is checked, not defaulted.
 */
export function checkJobOptionFields(
  input: object,
  bad: Bad,
  prefix = '',
): { options: JobOptions; queue: string | undefined } {
  const o = input as Readonly<Record<string, unknown>>;
  const options: JobOptions = {};
  if (o.retries !== undefined) options.retries = checkRetries(`${prefix}retries`, o.retries, bad);
  if (o.backoff !== undefined) options.backoff = checkBackoff(`${prefix}backoff`, o.backoff, bad);
  if (o.ignoreResult !== undefined) {
    if (typeof o.ignoreResult !== 'boolean') bad(`${prefix}ignoreResult`, o.ignoreResult, 'true or false');
    options.ignoreResult = o.ignoreResult;
  }
  if (o.resultTtl !== undefined) options.resultTtl = checkResultTtl(`${prefix}resultTtl`, o.resultTtl, bad);
  if (o.timeLimit !== undefined) options.timeLimit = checkTimeLimit(`${prefix}timeLimit`, o.timeLimit, bad);
  if (o.softTimeLimit !== undefined)
    options.softTimeLimit = checkTimeLimit(`${prefix}softTimeLimit`, o.softTimeLimit, bad);
  checkLimitOrder(options.timeLimit, options.softTimeLimit, o.softTimeLimit, `${prefix}softTimeLimit`, bad);
  if (o.rateLimit !== undefined) options.rateLimit = checkRateLimit(`${prefix}rateLimit`, o.rateLimit, bad);
  const queue = o.queue === undefined ? undefined : checkQueueName(`${prefix}queue`, o.queue, bad);
  return { options, queue };
}

/**
 * The options of a job record as a broker reads them back, whoever wrote
 * them: the stored form of what `Client.enqueue` keeps after
 * checkJobOptionFields (JobOptions: durations as numbers of ms, never
 * "30s"), put through the same checks. The first bad field goes to `bad`,
 * named by its key (a backoff's by `backoff.<key>`). Returns `value` itself,
 * uncopied: this runs for every job fetched. Keys it does not know are
 * ignored on purpose: a newer producer may store an option this worker
 * cannot honour, and its job runs without it rather than failing for good
 * on a worker not yet upgraded (a backoff's unknown key is refused, as
 * checkBackoff has always done when the backoff is used).
 */
export function checkJobRecordOptions(value: unknown, bad: Bad): JobOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad('options', value, 'an object');
  const o = value as Readonly<Record<string, unknown>>;
  if (o.retries !== undefined) checkRetries('retries', o.retries, bad);
  if (o.backoff !== undefined) {
    if (typeof o.backoff === 'object' && o.backoff !== null) {
      const { delay, cap } = o.backoff as Readonly<Record<string, unknown>>;
      if (delay !== undefined) storedMs('backoff.delay', delay, bad);
      if (cap !== undefined) storedMs('backoff.cap', cap, bad);
    }
    checkBackoff('backoff', o.backoff, bad);
  }
  if (o.ignoreResult !== undefined && typeof o.ignoreResult !== 'boolean')
    bad('ignoreResult', o.ignoreResult, 'true or false');
  if (o.resultTtl !== undefined && !isResultTtl(o.resultTtl))
    bad('resultTtl', o.resultTtl, 'whole milliseconds > 0, up to 100 years');
  const timeLimit =
    o.timeLimit === undefined ? undefined : checkTimeLimit('timeLimit', storedMs('timeLimit', o.timeLimit, bad), bad);
  const softTimeLimit =
    o.softTimeLimit === undefined
      ? undefined
      : checkTimeLimit('softTimeLimit', storedMs('softTimeLimit', o.softTimeLimit, bad), bad);
  checkLimitOrder(timeLimit, softTimeLimit, o.softTimeLimit, 'softTimeLimit', bad);
  if (o.rateLimit !== undefined) checkRateLimit('rateLimit', o.rateLimit, bad);
  return value;
}

/** A duration as a record stores it: a number of ms (the range is the caller's check). */
function storedMs(option: string, value: unknown, bad: Bad): number {
  if (typeof value !== 'number') bad(option, value, 'a number of ms (a job record stores durations in ms)');
  return value;
}

/**
 * A retry delay a task asked for (`new Retry({ delay })`) or backoff
 * computed: whole ms in [0, MAX_DELAY_MS] (negative → 0, beyond the maximum
 * or Infinity → the maximum). NaN or a non-number is an OptionError naming
 * `what`: there is no sensible guess, so the Consumer dead-letters the job.
 */
export function clampDelay(value: unknown, what: string): number {
  if (typeof value !== 'number' || Number.isNaN(value)) throw new OptionError(what, value, 'a number of ms >= 0');
  return Math.round(Math.min(MAX_DELAY_MS, Math.max(0, value)));
}

/**
 * A retry delay as the brokers store it. Settlements come from the Consumer,
 * which already ran clampDelay (a NaN dead-letters the job there); this only
 * keeps another caller's NaN from failing a whole batch of settlements.
 */
export function retryDelayMs(ms: number): number {
  return Number.isNaN(ms) ? 0 : clampDelay(ms, 'delay');
}
