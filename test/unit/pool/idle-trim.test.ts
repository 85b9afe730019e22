import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IDLE_TRIM_MS, IdleTrim } from '../../../dist/pool/idle-trim.js';

/** A pool reduced to what IdleTrim reads: jobs taken so far, jobs unsettled. */
function fakePool(): { taken: number; unsettled: number; trims: number; trim: IdleTrim } {
  const pool = { taken: 0, unsettled: 0, trims: 0, trim: undefined as unknown as IdleTrim };
  pool.trim = new IdleTrim(
    () => pool.taken,
    () => pool.unsettled > 0,
    () => {
      pool.trims++;
      return true;
    },
  );
  return pool;
}

describe('IdleTrim (the parent collects its young generation once the pool is quiet)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('collects once after IDLE_TRIM_MS with no job, and not again until the pool has worked', () => {
    const pool = fakePool();
    pool.trim.arm();
    vi.advanceTimersByTime(IDLE_TRIM_MS - 1);
    expect(pool.trims).toBe(0);
    vi.advanceTimersByTime(1);
    expect(pool.trims).toBe(1);
    vi.advanceTimersByTime(IDLE_TRIM_MS * 5);
    expect(pool.trims).toBe(1);
  });

  it('counts the quiet spell from the last time the pool ran dry', () => {
    const pool = fakePool();
    pool.trim.arm();
    vi.advanceTimersByTime(IDLE_TRIM_MS / 2);
    pool.taken += 3;
    pool.trim.arm(); // the pool ran dry again while a check was pending
    vi.advanceTimersByTime(IDLE_TRIM_MS - 1);
    expect(pool.trims).toBe(0);
    vi.advanceTimersByTime(1);
    expect(pool.trims).toBe(1);
  });

  it('starts the spell again when jobs came and went unseen', () => {
    const pool = fakePool();
    pool.trim.arm();
    vi.advanceTimersByTime(IDLE_TRIM_MS / 2);
    pool.taken++;
    vi.advanceTimersByTime(IDLE_TRIM_MS / 2);
    expect(pool.trims).toBe(0);
    vi.advanceTimersByTime(IDLE_TRIM_MS - 1);
    expect(pool.trims).toBe(0);
    vi.advanceTimersByTime(1);
    expect(pool.trims).toBe(1);
  });

  it('never collects while a job is unsettled; the pool arms it again when it runs dry', () => {
    const pool = fakePool();
    pool.trim.arm();
    pool.taken++;
    pool.unsettled++;
    vi.advanceTimersByTime(IDLE_TRIM_MS * 3);
    expect(pool.trims).toBe(0);
    pool.unsettled--;
    pool.trim.arm();
    vi.advanceTimersByTime(IDLE_TRIM_MS);
    expect(pool.trims).toBe(1);
  });

  it('does nothing once stopped', () => {
    const pool = fakePool();
    pool.trim.arm();
    pool.trim.stop();
    vi.advanceTimersByTime(IDLE_TRIM_MS * 2);
    expect(pool.trims).toBe(0);
  });
});
