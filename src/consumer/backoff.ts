import type { BackoffOptions } from '../broker/types.js';
import { OptionError } from '../errors.js';

export const BACKOFF_DEFAULTS = { type: 'exponential', delay: 1_000, cap: 600_000, jitter: true } as const;

/**
 * The longest a retry waits (365 days). A larger (or infinite) delay is
 * clamped to this: the due time must stay a finite number for the broker.
 */
export const MAX_RETRY_DELAY_MS = 365 * 24 * 3_600_000;

/**
 * Checks backoff options as they arrive with a job or a task definition
 * (the job record may come from any producer); throws an OptionError naming
 * the bad field. `where` prefixes the option name, e.g. "backoff".
 */
export function checkBackoff(options: unknown, where = 'backoff'): BackoffOptions | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) throw new OptionError(where, options, '{ type, delay, cap, jitter }');
  const o = options as Record<string, unknown>;
  if (o.type !== undefined && o.type !== 'exponential' && o.type !== 'fixed') throw new OptionError(`${where}.type`, o.type, '"exponential" | "fixed"');
  for (const key of ['delay', 'cap'] as const) {
    const v = o[key];
    if (v !== undefined && (typeof v !== 'number' || Number.isNaN(v) || v < 0)) throw new OptionError(`${where}.${key}`, v, 'a number of ms >= 0');
  }
  if (o.jitter !== undefined && typeof o.jitter !== 'boolean') throw new OptionError(`${where}.jitter`, o.jitter, 'a boolean');
  return o as BackoffOptions;
}

/**
 * A delay in ms as the broker can store it: an integer in [0, MAX_RETRY_DELAY_MS]
 * (negative → 0, beyond the maximum or Infinity → the maximum). NaN or a
 * non-number is an OptionError naming `what`: there is no sensible guess.
 */
export function clampDelay(value: unknown, what: string): number {
  if (typeof value !== 'number' || Number.isNaN(value)) throw new OptionError(what, value, 'a number of ms >= 0');
  return Math.round(Math.min(MAX_RETRY_DELAY_MS, Math.max(0, value)));
}

/**
 * Delay before retry number `attempt + 1` (attempt counts retries already
 * spent). Exponential doubles from `delay`; jitter draws from [d/2, d] so a
 * burst of failures does not retry in lockstep; never above `cap`. Bad
 * options throw an OptionError (see checkBackoff).
 */
export function backoffDelay(attempt: number, options: BackoffOptions | undefined, random: () => number = Math.random): number {
  checkBackoff(options);
  const type = options?.type ?? BACKOFF_DEFAULTS.type;
  const base = options?.delay ?? BACKOFF_DEFAULTS.delay;
  const cap = options?.cap ?? BACKOFF_DEFAULTS.cap;
  const jitter = options?.jitter ?? BACKOFF_DEFAULTS.jitter;
  const raw = type === 'fixed' ? base : base * 2 ** Math.min(Math.max(0, attempt), 30);
  const capped = Math.min(raw, cap);
  return clampDelay(jitter ? capped / 2 + (random() * capped) / 2 : capped, 'backoff.delay');
}
