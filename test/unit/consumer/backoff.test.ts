import { describe, expect, it } from 'vitest';
import { backoffDelay, checkBackoff, MAX_RETRY_DELAY_MS } from '../../../dist/consumer/backoff.js';

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

  it('fixed waits the same every time', () => {
    expect(backoffDelay(0, { type: 'fixed', delay: 250, jitter: false })).toBe(250);
    expect(backoffDelay(9, { type: 'fixed', delay: 250, jitter: false })).toBe(250);
  });

  it('jitter stays within [d/2, d]', () => {
    expect(backoffDelay(3, { delay: 100 }, top)).toBe(800);
    expect(backoffDelay(3, { delay: 100 }, bottom)).toBe(400);
  });

  it('never NaN: a huge fixed delay is clamped to the maximum', () => {
    expect(backoffDelay(0, { type: 'fixed', delay: Infinity, cap: Infinity, jitter: false })).toBe(MAX_RETRY_DELAY_MS);
  });

  it.each([
    [{ delay: NaN }, /backoff\.delay: NaN/],
    [{ delay: -1 }, /backoff\.delay: -1/],
    [{ cap: '1s' }, /backoff\.cap: "1s"/],
    [{ type: 'linear' }, /backoff\.type: "linear"/],
    [{ jitter: 'yes' }, /backoff\.jitter: "yes"/],
  ])('bad options %j are an OptionError naming the field', (options, message) => {
    expect(() => backoffDelay(0, options as never)).toThrow(message);
    expect(() => checkBackoff(options)).toThrow(message);
  });
});
