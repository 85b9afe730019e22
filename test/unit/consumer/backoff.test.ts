import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../../dist/consumer/backoff.js';
import { checkBackoff, throwOptionError } from '../../../dist/job-option-checks.js';
import { MAX_DELAY_MS } from '../../../dist/util/units.js';

describe('backoffDelay', () => {
  const top = (): number => 1; // jitter draws its upper bound
  const bottom = (): number => 0; // and its lower bound

  it.each([
    [0, 1000],
    [1, 2000],
    [2, 4000],
    [5, 32000],
  ])('exponential without jitter: attempt %i waits %i ms', (attempt, ms) => {
    expect(backoffDelay(attempt, { jitter: false })).toBe(ms);
  });

  it('is capped', () => {
    expect(backoffDelay(20, { jitter: false, cap: 60_000 })).toBe(60_000);
  });

  it('a delay longer than the default cap is not cut to it: the default cap is only for growth', () => {
    expect(backoffDelay(0, { type: 'fixed', delay: 3_600_000 })).toBe(3_600_000);
    expect(backoffDelay(4, { type: 'fixed', delay: 3_600_000 })).toBe(3_600_000);
    expect(backoffDelay(0, { delay: 3_600_000, jitter: false })).toBe(3_600_000);
    expect(backoffDelay(3, { delay: 3_600_000, jitter: false })).toBe(3_600_000);
  });

  it('a cap given is kept, even below the delay', () => {
    expect(backoffDelay(0, { type: 'fixed', delay: 3_600_000, cap: 60_000 })).toBe(60_000);
  });

  it('fixed waits the same every time', () => {
    expect(backoffDelay(0, { type: 'fixed', delay: 250, jitter: false })).toBe(250);
    expect(backoffDelay(9, { type: 'fixed', delay: 250, jitter: false })).toBe(250);
  });

  it('fixed is not jittered unless asked: it waits its delay exactly', () => {
    expect(backoffDelay(3, { type: 'fixed', delay: 100 }, bottom)).toBe(100);
    expect(backoffDelay(3, { type: 'fixed', delay: 100 }, top)).toBe(100);
    expect(backoffDelay(3, { type: 'fixed', delay: 100, jitter: true }, bottom)).toBe(50);
  });

  it('jitter stays within [d/2, d]', () => {
    expect(backoffDelay(3, { delay: 100 }, top)).toBe(800);
    expect(backoffDelay(3, { delay: 100 }, bottom)).toBe(400);
  });

  it('never above the maximum delay: exponential growth from the largest base stops at 100 years', () => {
    expect(backoffDelay(30, { delay: MAX_DELAY_MS, cap: MAX_DELAY_MS, jitter: false })).toBe(MAX_DELAY_MS);
  });

  it('reads durations as enqueue does: "1s" is 1000 ms', () => {
    expect(backoffDelay(0, { type: 'fixed', delay: '1s', jitter: false } as never)).toBe(1000);
  });

  it.each([
    [{ delay: NaN }, /backoff\.delay: NaN/],
    [{ delay: -1 }, /backoff\.delay: -1/],
    [{ cap: Infinity }, /backoff\.cap: Infinity/],
    [{ cap: MAX_DELAY_MS + 1 }, /backoff\.cap: 3155760000001/],
    [{ type: 'linear' }, /backoff\.type: "linear"/],
    [{ jitter: 'yes' }, /backoff\.jitter: "yes"/],
    [{ delays: 5 }, /backoff\.delays: 5/],
  ])(
    'bad options %j are an OptionError naming the field, the same at enqueue and in the Consumer',
    (options, message) => {
      expect(() => backoffDelay(0, options as never)).toThrow(message);
      expect(() => checkBackoff('backoff', options, throwOptionError)).toThrow(message);
    },
  );
});
