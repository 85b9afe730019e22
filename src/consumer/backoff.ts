import type { BackoffOptions } from '../job-types.js';
import { checkBackoff, clampDelay, throwOptionError } from '../job-option-checks.js';
import { retryDelay } from '../util/backoff.js';

export const BACKOFF_DEFAULTS = { type: 'exponential', delay: 1_000, cap: 600_000 } as const;

/**
 * Delay before retry number `attempt + 1` of a job (attempt counts retries
 * already spent), by its backoff with the defaults filled in: jittered
 * unless it says `jitter: false`, except a fixed backoff, which waits its
 * delay exactly unless it says `jitter: true`. Without a cap, the cap is
 * 10 minutes or the delay, whichever is longer. The job record may come from
 * any producer, so its backoff goes through the same check as at enqueue
 * (checkBackoff): a bad one throws an OptionError naming the field.
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions | undefined,
  random: () => number = Math.random,
): number {
  const checked = options === undefined ? undefined : checkBackoff('backoff', options, throwOptionError);
  const type = checked?.type ?? BACKOFF_DEFAULTS.type;
  const delay = checked?.delay ?? BACKOFF_DEFAULTS.delay;
  const policy = {
    type,
    delay,
    // The default cap bounds growth, never the delay asked for: a fixed "1h" waits an hour, not 10 minutes.
    cap: checked?.cap ?? Math.max(BACKOFF_DEFAULTS.cap, delay),
    jitter: checked?.jitter ?? type !== 'fixed',
  };
  return clampDelay(retryDelay(attempt, policy, random), 'backoff.delay');
}
