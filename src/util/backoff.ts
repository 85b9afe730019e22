/** How a retry loop spaces its tries: the one delay computation for them all. */
export interface BackoffPolicy {
  /** 'exponential' (the default): `delay` × 2^attempt; 'fixed': `delay` every time. */
  type?: 'exponential' | 'fixed';
  /** The first delay, in ms. */
  delay: number;
  /** The largest delay, in ms. */
  cap: number;
  /** Draw each delay from [d/2, d], so a burst of failures does not retry in lockstep (default false). */
  jitter?: boolean;
}

/** Doublings stop here: past it the product is no longer exact (and 0 × Infinity would be NaN). */
const MAX_DOUBLINGS = 30;

/**
 * The delay in ms before the next try, after `attempt` + 1 failures in a row
 * (0 = after the first): d = min(delay × 2^attempt, cap), or a draw from
 * [d/2, d] with jitter. `random` is for tests.
 */
export function retryDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const doublings = policy.type === 'fixed' ? 0 : Math.min(Math.max(0, attempt), MAX_DOUBLINGS);
  const d = Math.min(policy.delay * 2 ** doublings, policy.cap);
  return policy.jitter === true ? d / 2 + (random() * d) / 2 : d;
}
