import type { BackoffOptions } from '../broker/types.js';

export const BACKOFF_DEFAULTS = { type: 'exponential', delay: 1_000, cap: 600_000, jitter: true } as const;

/**
 * Delay before retry number `attempt + 1` (attempt counts retries already
 * spent). Exponential doubles from `delay`; jitter draws from [d/2, d] so a
 * burst of failures does not retry in lockstep; never above `cap`.
 */
export function backoffDelay(attempt: number, options: BackoffOptions | undefined, random: () => number = Math.random): number {
  const type = options?.type ?? BACKOFF_DEFAULTS.type;
  const base = options?.delay ?? BACKOFF_DEFAULTS.delay;
  const cap = options?.cap ?? BACKOFF_DEFAULTS.cap;
  const jitter = options?.jitter ?? BACKOFF_DEFAULTS.jitter;
  const raw = type === 'fixed' ? base : base * 2 ** Math.min(attempt, 30);
  const capped = Math.min(raw, cap);
  return Math.round(jitter ? capped / 2 + (random() * capped) / 2 : capped);
}
