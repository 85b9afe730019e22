import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GIVE_BACK_LOOK_MS, HoardGuard } from '../../../dist/consumer/hoard-guard.js';
import { FixedPrefetch, PREFETCH_GIVE_BACK_MS, type Prefetch } from '../../../dist/consumer/prefetch.js';

/** A prefetch that keeps 10 and gives back what is past that once the oldest job waited PREFETCH_GIVE_BACK_MS. */
function keepingTen(): Prefetch {
  return {
    limit: 40,
    giveBackAbove: 10,
    sent() {},
    settled() {},
    replied() {},
    resize() {},
    excess: (held, waited) => (held > 10 && waited >= PREFETCH_GIVE_BACK_MS ? held - 10 : 0),
    gaveBack() {
      gaveBack++;
    },
  };
}

let gaveBack = 0;

describe('HoardGuard', () => {
  let reserved = 0;
  let oldest: number | undefined;
  let running = true;
  let given: number[] = [];
  const guard = (prefetch: Prefetch) =>
    new HoardGuard({
      prefetch,
      reserved: () => reserved,
      oldestUnstartedAt: () => oldest,
      giveBack: (n) => {
        given.push(n);
        reserved -= n;
        return n;
      },
      running: () => running,
      log: pino({ level: 'silent' }),
      // The faked clock: it moves with the timers, as the real one would.
      now: () => Date.now(),
    });
  const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);

  beforeEach(() => {
    vi.useFakeTimers();
    gaveBack = 0;
    reserved = 0;
    oldest = undefined;
    running = true;
    given = [];
  });
  afterEach(() => vi.useRealTimers());

  it('gives back what is held past the cap once the oldest job not started has waited long enough', async () => {
    const g = guard(keepingTen());
    reserved = 40;
    oldest = Date.now();
    g.arrived();
    // Looked at every GIVE_BACK_LOOK_MS: nothing goes while the wait is shorter than PREFETCH_GIVE_BACK_MS ...
    await advance(PREFETCH_GIVE_BACK_MS);
    expect(given).toEqual([]);
    // ... and the first look past it gives back.
    await advance(GIVE_BACK_LOOK_MS);
    expect(given).toEqual([30]);
    // The prefetch hears of it once: its allowance is measured afresh.
    expect(gaveBack).toBe(1);
    // Back within the cap: it stops looking.
    await advance(10 * GIVE_BACK_LOOK_MS);
    expect(given).toEqual([30]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not look while the node holds no more than the cap, nor once it stops fetching', async () => {
    const g = guard(keepingTen());
    reserved = 10;
    oldest = Date.now();
    g.arrived();
    expect(vi.getTimerCount()).toBe(0);
    reserved = 40;
    g.arrived();
    expect(vi.getTimerCount()).toBe(1);
    // stop() clears the look it had armed.
    g.stop();
    expect(vi.getTimerCount()).toBe(0);
    await advance(2 * PREFETCH_GIVE_BACK_MS);
    expect(given).toEqual([]);
    // Once the node stops fetching, an armed look gives nothing back and does not look again.
    g.arrived();
    running = false;
    await advance(2 * PREFETCH_GIVE_BACK_MS);
    expect(given).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never gives back with a fixed prefetchMultiplier', async () => {
    const g = guard(new FixedPrefetch(4, 2));
    reserved = 1_000;
    oldest = Date.now();
    g.arrived();
    await advance(10 * PREFETCH_GIVE_BACK_MS);
    expect(given).toEqual([]);
  });
});
