import type { BackoffOptions } from '../job-types.js';
import { checkBackoff, clampDelay, throwOptionError } from '../job-option-checks.js';

export const BACKOFF_DEFAULTS = { type: 'exponential', delay: 1_000, cap: 600_000, jitter: true } as const;

/**
 * Delay before retry number `attempt + 1` (attempt counts retries already
 * spent). Exponential doubles from `delay`; jitter draws from [d/2, d] so a
 * burst of failures does not retry in lockstep; never above `cap`. The job
 * record may come from any producer, so its backoff goes through the same
 * check as at enqueue (checkBackoff): a bad one throws an OptionError naming
 * the field.
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions | undefined,
  random: () => number = Math.random,
): number {
  const checked = options === undefined ? undefined : checkBackoff('backoff', options, throwOptionError);
  const type = checked?.type ?? BACKOFF_DEFAULTS.type;
  const base = checked?.delay ?? BACKOFF_DEFAULTS.delay;
  const cap = checked?.cap ?? BACKOFF_DEFAULTS.cap;
  const jitter = checked?.jitter ?? BACKOFF_DEFAULTS.jitter;
  const raw = type === 'fixed' ? base : base * 2 ** Math.min(Math.max(0, attempt), 30);
  const capped = Math.min(raw, cap);
  return clampDelay(jitter ? capped / 2 + (random() * capped) / 2 : capped, 'backoff.delay');
}
