import { describe, expect, it } from 'vitest';
import { retryDelay } from '../../../dist/util/backoff.js';

describe('retryDelay', () => {
  const policy = { delay: 100, cap: 5_000 };

  it('doubles from the first delay up to the cap, as the retry loops pause', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50, 5_000].map((n) => retryDelay(n, policy))).toEqual([
      100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000,
    ]);
  });

  it('fixed waits the same every time', () => {
    expect([0, 1, 9].map((n) => retryDelay(n, { type: 'fixed', delay: 500, cap: 500 }))).toEqual([500, 500, 500]);
  });

  it('is not jittered unless asked; with jitter it draws from [d/2, d]', () => {
    expect(retryDelay(2, policy, () => 0)).toBe(400);
    expect(retryDelay(2, { ...policy, jitter: true }, () => 0)).toBe(200);
    expect(retryDelay(2, { ...policy, jitter: true }, () => 1)).toBe(400);
  });

  it('a first delay of 0 stays 0 however many failures (no NaN)', () => {
    expect(retryDelay(10_000, { delay: 0, cap: 1_000 })).toBe(0);
  });
});
