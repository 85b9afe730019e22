/**
 * Durations, sizes and counts as people write them, for options and CLI
 * flags: one parser and one check each, and the limits they must keep.
 * Imports nothing, so any layer may use it.
 */

/** Longest delay a Node timer honours: setTimeout fires at once for more (and warns). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * Longest delay of a job or a retry (100 years), the one limit for `delay`,
 * backoff `delay`/`cap` and `new Retry({ delay })`: a typo guard that keeps
 * due times exact integers everywhere.
 */
export const MAX_DELAY_MS = 3_155_760_000_000;

/**
 * `ms` as a timer can wait it: never negative, and at most MAX_TIMER_MS,
 * where the caller wakes early and re-arms rather than spin.
 */
export function timerMs(ms: number): number {
  return Math.min(MAX_TIMER_MS, Math.max(0, ms));
}

/** Reports a bad value: throws, naming the option, the value and what was expected. */
export type Bad = (option: string, value: unknown, expected: string) => never;

const DURATION_UNITS = new Map([
  ['ms', 1],
  ['s', 1000],
  ['m', 60_000],
  ['h', 3_600_000],
  ['d', 86_400_000],
]);

/** A duration as written: its number and its unit (lower case), undefined when none was written. */
export interface DurationText {
  readonly amount: number;
  readonly unit: string | undefined;
}

/** "250ms", "30s", "2m", "1.5h", "1d" or a bare number, taken apart; undefined when not valid. */
export function splitDuration(value: string): DurationText | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(value);
  return m === null ? undefined : { amount: Number(m[1]), unit: m[2]?.toLowerCase() };
}

/** "250ms", "30s", "2m", "1.5h", "1d", or a bare number of milliseconds; undefined when not valid. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const text = splitDuration(value);
  if (text === undefined) return undefined;
  return Math.round(text.amount * (DURATION_UNITS.get(text.unit ?? 'ms') as number));
}

/** A rate limit as the bucket uses it: `count` starts per `periodMs`, one every `intervalMs`. */
export interface Rate {
  /** The rate as written back: "100/s", "10/m", "1000/h". */
  readonly text: string;
  /** Starts per period. */
  readonly count: number;
  /** The period in ms (1 s, 1 min or 1 h). */
  readonly periodMs: number;
  /** Ms between two starts: periodMs / count. */
  readonly intervalMs: number;
}

/**
 * "100/s", "10/m", "1000/h" (starts per second, minute or hour; spaces
 * around the parts allowed); undefined when not valid. At most one start per
 * microsecond, at least one per 100 years.
 */
export function parseRate(value: string): Rate | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(s|m|h)\s*$/i.exec(value);
  if (m === null) return undefined;
  const count = Number(m[1]);
  const unit = (m[2] as string).toLowerCase();
  // The pattern admits s, m and h only: the duration units of the same names.
  const periodMs = DURATION_UNITS.get(unit) as number;
  const intervalMs = periodMs / count;
  if (!(count > 0) || intervalMs < 0.001 || intervalMs > MAX_DELAY_MS) return undefined;
  return { text: `${count}/${unit}`, count, periodMs, intervalMs };
}

/** A rate limit (see parseRate) as its normalized text; anything else goes to `bad`. */
export function checkRate(option: string, value: unknown, bad: Bad): Rate {
  const rate = typeof value === 'string' ? parseRate(value) : undefined;
  if (rate === undefined)
    bad(option, value, 'a rate like "100/s", "10/m" or "1000/h" (starts per second, minute or hour, above 0)');
  return rate;
}

/** The size rule as data: k, m, g with an `i` are powers of 1024, without one powers of 1000; a `b` after either is optional. */
const SIZE_UNITS = new Map<string, number>([['b', 1]]);
for (const [i, letter] of ['k', 'm', 'g'].entries()) {
  for (const end of ['', 'b']) {
    SIZE_UNITS.set(letter + end, 1000 ** (i + 1));
    SIZE_UNITS.set(`${letter}i${end}`, 1024 ** (i + 1));
  }
}

/**
 * A size in bytes: a bare number, or a number and a unit, case ignored.
 * One rule: a unit with an `i` is binary (IEC: `KiB`/`Ki` = 1024, `MiB`,
 * `GiB`), any other is decimal (SI: `k` = `kB` = 1000, `M` = `MB` = 10^6,
 * `G` = `GB` = 10^9). "512MB" is 512,000,000 bytes; "512MiB" is 536,870,912.
 * Undefined when not valid or not at least one byte.
 */
export function parseSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$/i.exec(value);
  if (m === null) return undefined;
  const unit = SIZE_UNITS.get((m[2] ?? 'b').toLowerCase());
  if (unit === undefined) return undefined;
  const bytes = Math.floor(Number(m[1]) * unit);
  return bytes > 0 ? bytes : undefined;
}

/**
 * What a duration is for, which sets its range:
 * - any: >= 0, any length (compared with clocks, never waited on).
 * - positive: > 0, any length.
 * - timer: > 0 and at most MAX_TIMER_MS: it arms a setTimeout/setInterval, which fires at once past that.
 * - wait: >= 0 and at most MAX_TIMER_MS (a grace period or a timeout).
 * - delay: >= 0 and at most MAX_DELAY_MS (waits in the broker, not in a timer).
 * - expiry: > 0 and at most MAX_DELAY_MS (a Redis expiry: past the range Redis refuses the write).
 */
export type DurationKind = 'any' | 'positive' | 'timer' | 'wait' | 'delay' | 'expiry';

const DURATION_RANGES = new Map<DurationKind, { positive: boolean; max: number }>([
  ['any', { positive: false, max: Infinity }],
  ['positive', { positive: true, max: Infinity }],
  ['timer', { positive: true, max: MAX_TIMER_MS }],
  ['wait', { positive: false, max: MAX_TIMER_MS }],
  ['delay', { positive: false, max: MAX_DELAY_MS }],
  ['expiry', { positive: true, max: MAX_DELAY_MS }],
]);

/** How checkDuration says a duration may be given (the CLI, which takes no bare number, words it its way). */
export const DURATION_SPELLING = 'in ms or a string like "30s"';

/** A duration of `kind` in ms, from ms or a string like "30s"; anything else or out of range goes to `bad`. */
export function checkDuration(option: string, value: unknown, kind: DurationKind, bad: Bad): number {
  const { positive, max } = DURATION_RANGES.get(kind) as { positive: boolean; max: number };
  const ms = typeof value === 'number' || typeof value === 'string' ? parseDuration(value) : undefined;
  if (ms !== undefined && ms > max && max === MAX_TIMER_MS)
    bad(option, value, `at most ${MAX_TIMER_MS} ms (about 24.8 days): longer timers fire at once in Node`);
  if (ms === undefined || (positive && ms <= 0) || ms > max) {
    const upTo =
      max === MAX_TIMER_MS
        ? ` up to ${MAX_TIMER_MS} ms (about 24.8 days)`
        : max === MAX_DELAY_MS
          ? ' up to 100 years'
          : '';
    bad(option, value, `${positive ? 'a positive duration' : 'a duration >= 0'}${upTo}, ${DURATION_SPELLING}`);
  }
  return ms;
}

/**
 * A size in bytes (see parseSize), from bytes or a string like "512MB", up
 * to `max` bytes (2^53-1 unless the size has a tighter bound); anything else
 * goes to `bad`.
 */
export function checkSize(option: string, value: unknown, bad: Bad, max = Number.MAX_SAFE_INTEGER): number {
  const bytes = typeof value === 'number' || typeof value === 'string' ? parseSize(value) : undefined;
  if (bytes === undefined || bytes > max) {
    const upTo = max === Number.MAX_SAFE_INTEGER ? '' : ` up to ${max} bytes`;
    bad(option, value, `a positive size in bytes${upTo} or a string like "512MB" or "200MiB"`);
  }
  return bytes;
}

/**
 * The most children one pool may have (`processes`, `maxProcesses`,
 * autoscale's max; the Worker's `concurrency`, `maxConcurrency`): far past
 * any host's useful prefork count (the default bound is 4 per CPU), a typo
 * guard that keeps the counts and the prefetch limits built on them exact.
 */
export const MAX_PROCESSES = 4096;

/** "2^53-1": the largest integer a count may be (a double holds it exactly, and so do the scripts' intArg). */
const SAFE_MAX_TEXT = '2^53-1';

/** An integer as typed ("42", spaces around it allowed), or undefined; it may be past 2^53-1 (checkInteger says so). */
export function parseInteger(value: string): number | undefined {
  return /^\s*\d+\s*$/.test(value) ? Number(value) : undefined;
}

/**
 * An integer count in [min, max] (max at most 2^53-1: past it a double is
 * no longer exact, and the Redis scripts refuse the argument); anything
 * else goes to `bad`, which names what was expected with both bounds.
 */
export function checkInteger(
  option: string,
  value: unknown,
  bad: Bad,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max)
    bad(option, value, integerRange(min, max));
  return value;
}

/** "an integer from 1 to 4096", with 2^53-1 spelt so. */
export function integerRange(min: number, max = Number.MAX_SAFE_INTEGER): string {
  return `an integer from ${min} to ${max === Number.MAX_SAFE_INTEGER ? SAFE_MAX_TEXT : max}`;
}

/** What an autoscale setting must be, for every message that refuses one. */
export const AUTOSCALE_EXPECTED = `"max,min" or [max, min]: integers with 1 <= max <= ${MAX_PROCESSES} and 0 <= min <= max`;

/** `[max, min]` or "max,min" (Celery's --autoscale), max at most MAX_PROCESSES; undefined when not valid. */
export function parseAutoscale(value: unknown): [number, number] | undefined {
  let pair: unknown[];
  if (typeof value === 'string') {
    const parts = value.split(',').map(parseInteger);
    if (parts.length !== 2) return undefined;
    pair = parts;
  } else if (Array.isArray(value) && value.length === 2) {
    pair = value;
  } else {
    return undefined;
  }
  const [max, min] = pair;
  if (!Number.isSafeInteger(max) || !Number.isSafeInteger(min)) return undefined;
  if (
    (max as number) < 1 ||
    (max as number) > MAX_PROCESSES ||
    (min as number) < 0 ||
    (min as number) > (max as number)
  )
    return undefined;
  return [max as number, min as number];
}
