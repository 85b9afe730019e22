import { describe, expect, it } from 'vitest';
import {
  AdaptivePrefetch,
  FixedPrefetch,
  PREFETCH_FLOOR_PER_PROCESS,
  PREFETCH_MAX,
  PREFETCH_MAX_BYTES,
  PREFETCH_MAX_PER_PROCESS,
  PREFETCH_TRIPS,
  type Prefetch,
} from '../../../dist/consumer/prefetch.js';

/**
 * One fetch cycle as the Consumer drives it: the fetch leaves with `held`
 * jobs held, `finished` of them settle while it is on the wire, and the
 * reply brings everything asked for (a backlog), each job `bytes` long.
 */
function trip(p: AdaptivePrefetch, held: number, finished: number, bytes = 10): void {
  p.sent(held);
  for (let i = 1; i <= finished; i++) p.settled(held - i);
  const asked = p.limit - held;
  p.replied(held - finished, asked, asked, asked * bytes);
}

describe('AdaptivePrefetch', () => {
  const processes = 2;
  const floor = PREFETCH_FLOOR_PER_PROCESS * processes;
  const cap = Math.min(PREFETCH_MAX, PREFETCH_MAX_PER_PROCESS * processes);

  it('starts at 4 per child and stays there while long jobs finish none during a round trip', () => {
    const p = new AdaptivePrefetch(processes);
    expect(p.limit).toBe(floor);
    for (let i = 0; i < 20; i++) trip(p, floor / 2, 0);
    expect(p.limit).toBe(floor);
  });

  it('grows to cover round trips of quick jobs: half the limit holds the running jobs and PREFETCH_TRIPS trips of them', () => {
    const p = new AdaptivePrefetch(processes);
    // Each round trip, 3 jobs finish and the children never run dry.
    for (let i = 0; i < 30; i++) trip(p, Math.floor(p.limit / 2), 3);
    expect(p.limit).toBe(2 * (processes + PREFETCH_TRIPS * 3));
    expect(p.limit).toBeGreaterThan(floor);
  });

  it('doubles when a child ran out of jobs during a round trip, up to the count cap and never past it', () => {
    const p = new AdaptivePrefetch(processes);
    const seen: number[] = [];
    for (let i = 0; i < 12; i++) {
      const held = Math.floor(p.limit / 2);
      // Everything held finishes before the reply: the children starve.
      trip(p, held, held);
      seen.push(p.limit);
    }
    expect(seen[0]).toBeGreaterThanOrEqual(2 * floor);
    expect(Math.max(...seen)).toBe(cap);
    expect(seen.at(-1)).toBe(cap);
  });

  it('large payloads lower the cap so the jobs held stay near PREFETCH_MAX_BYTES', () => {
    const p = new AdaptivePrefetch(processes);
    const bytes = PREFETCH_MAX_BYTES / 20;
    for (let i = 0; i < 12; i++) {
      const held = Math.floor(p.limit / 2);
      trip(p, held, held, bytes);
    }
    expect(p.cap).toBe(20);
    expect(p.limit).toBe(20);
  });

  it('a reply shorter than asked (the queue ran dry) changes nothing', () => {
    const p = new AdaptivePrefetch(processes);
    p.sent(0);
    p.settled(0);
    p.replied(0, floor, 1, 10);
    expect(p.limit).toBe(floor);
  });
});

describe('FixedPrefetch', () => {
  it('keeps the limit it was given whatever happens', () => {
    const p: Prefetch = new FixedPrefetch(4, 2);
    p.sent(0);
    p.settled(0);
    p.replied(0, 8, 8, 80);
    expect(p.limit).toBe(8);
  });
});

describe('the limit follows the pool (resize)', () => {
  it('FixedPrefetch keeps its multiplier: prefetchMultiplier × the new size', () => {
    const p = new FixedPrefetch(4, 2);
    p.resize(5);
    expect(p.limit).toBe(20);
    p.resize(1);
    expect(p.limit).toBe(4);
  });

  it('AdaptivePrefetch moves its floor and cap with the size, and works the limit out again from what it measured', () => {
    const p = new AdaptivePrefetch(2);
    expect(p.limit).toBe(2 * PREFETCH_FLOOR_PER_PROCESS);
    p.resize(10);
    expect(p.limit).toBe(10 * PREFETCH_FLOOR_PER_PROCESS);
    for (let i = 0; i < 30; i++) trip(p, Math.floor(p.limit / 2), 40);
    expect(p.limit).toBeGreaterThan(10 * PREFETCH_FLOOR_PER_PROCESS);
    // 40 jobs finish per round trip whatever the size: half the limit covers PREFETCH_TRIPS of those, capped per child.
    p.resize(12);
    expect(p.limit).toBe(Math.min(2 * (12 + PREFETCH_TRIPS * 40), 12 * PREFETCH_MAX_PER_PROCESS, PREFETCH_MAX));
    p.resize(1);
    expect(p.limit).toBe(PREFETCH_MAX_PER_PROCESS);
    // Nothing measured: the floor, whatever the size was.
    const fresh = new AdaptivePrefetch(5);
    fresh.resize(1);
    expect(fresh.limit).toBe(PREFETCH_FLOOR_PER_PROCESS);
  });
});
