import { describe, expect, it } from 'vitest';
import { RestartLimiter } from '../../../dist/pool/restart-limiter.js';

describe('RestartLimiter', () => {
  it('trips only when deaths exceed the maximum within the window', () => {
    const limiter = new RestartLimiter(2, 1000);
    expect(limiter.record(0)).toBe(false);
    expect(limiter.record(10)).toBe(false);
    expect(limiter.record(20)).toBe(true);
    expect(limiter.recent).toBe(3);
  });

  it('forgets deaths older than the window', () => {
    const limiter = new RestartLimiter(2, 1000);
    limiter.record(0);
    limiter.record(10);
    expect(limiter.record(1011)).toBe(false);
    expect(limiter.recent).toBe(1);
  });

  it('keeps a death exactly one window old', () => {
    const limiter = new RestartLimiter(1, 1000);
    limiter.record(0);
    expect(limiter.record(1000)).toBe(true);
  });

  it('never trips when deaths are spread out wider than the window', () => {
    const limiter = new RestartLimiter(1, 100);
    for (let t = 0; t < 10_000; t += 101) expect(limiter.record(t)).toBe(false);
  });
});
