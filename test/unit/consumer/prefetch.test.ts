import { describe, expect, it } from 'vitest';
import {
  AdaptivePrefetch,
  FixedPrefetch,
  PREFETCH_FLOOR_PER_PROCESS,
  PREFETCH_GIVE_BACK_MS,
  PREFETCH_MAX,
  PREFETCH_MAX_BYTES,
  PREFETCH_MAX_PER_PROCESS,
  PREFETCH_TRIPS,
  PREFETCH_WORK_MS,
  type Prefetch,
} from '../../../dist/consumer/prefetch.js';

/** The clock the prefetches here measure rates with: trips move it. */
let now = 0;
const clock = (): number => now;
const prefetch = (processes: number): AdaptivePrefetch => new AdaptivePrefetch(processes, { now: clock });

/**
 * One fetch cycle as the Consumer drives it: the fetch leaves with `held`
 * jobs held, `finished` of them settle while it is on the wire, and the
 * reply brings everything asked for (a backlog), each job `bytes` long,
 * `ms` after the last reply (by default a second: a rate far too low for
 * PREFETCH_WORK_MS to matter); `ran`: a child ran them (not deferred,
 * revoked or malformed jobs settled without running).
 */
function trip(p: AdaptivePrefetch, held: number, finished: number, bytes = 10, ms = 1_000, ran = true): void {
  p.sent(held);
  for (let i = 1; i <= finished; i++) p.settled(held - i, ran);
  const asked = p.limit - held;
  now += ms;
  p.replied(held - finished, asked, asked, asked * bytes);
}

describe('AdaptivePrefetch', () => {
  const processes = 2;
  const floor = PREFETCH_FLOOR_PER_PROCESS * processes;
  const cap = Math.min(PREFETCH_MAX, PREFETCH_MAX_PER_PROCESS * processes);

  it('starts at 4 per child and stays there while long jobs finish none during a round trip', () => {
    const p = prefetch(processes);
    expect(p.limit).toBe(floor);
    for (let i = 0; i < 20; i++) trip(p, floor / 2, 0);
    expect(p.limit).toBe(floor);
  });

  it('grows to cover round trips of quick jobs: half the limit holds the running jobs and PREFETCH_TRIPS trips of them', () => {
    const p = prefetch(processes);
    // Each round trip, 3 jobs finish and the children never run dry.
    for (let i = 0; i < 30; i++) trip(p, Math.floor(p.limit / 2), 3);
    expect(p.limit).toBe(2 * (processes + PREFETCH_TRIPS * 3));
    expect(p.limit).toBeGreaterThan(floor);
  });

  it('doubles when a child ran out of jobs during a round trip, up to the count cap and never past it', () => {
    const p = prefetch(processes);
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
    const p = prefetch(processes);
    const bytes = PREFETCH_MAX_BYTES / 20;
    for (let i = 0; i < 12; i++) {
      const held = Math.floor(p.limit / 2);
      trip(p, held, held, bytes);
    }
    expect(p.cap).toBe(20);
    expect(p.limit).toBe(20);
  });

  it('holds quick jobs past 64 per child: as many as finish in PREFETCH_WORK_MS at the rate measured, up to PREFETCH_MAX', () => {
    // 200 jobs finish between replies 2 ms apart: 100 a ms, so the node may hold 100 × PREFETCH_WORK_MS.
    const quick = prefetch(processes);
    for (let i = 0; i < 20; i++) trip(quick, Math.floor(quick.limit / 2), 200, 10, 2);
    const byWork = Math.min(PREFETCH_MAX, 100 * PREFETCH_WORK_MS);
    expect(byWork).toBeGreaterThan(cap);
    expect(quick.cap).toBe(byWork);
    expect(quick.limit).toBe(byWork);
    // 4 a ms: what finishes in PREFETCH_WORK_MS is under the count cap, which holds.
    const slower = prefetch(processes);
    for (let i = 0; i < 20; i++) trip(slower, Math.floor(slower.limit / 2), 40, 10, 10);
    expect(4 * PREFETCH_WORK_MS).toBeLessThan(cap);
    expect(slower.cap).toBe(cap);
    expect(slower.limit).toBe(cap);
  });

  it("without the quick allowance (fcfs: the jobs held wait in the children's pipes) keeps the count cap and gives nothing back", () => {
    const p = new AdaptivePrefetch(processes, { quickAllowance: false, now: clock });
    for (let i = 0; i < 20; i++) trip(p, Math.floor(p.limit / 2), 200, 10, 2);
    expect(p.cap).toBe(cap);
    expect(p.limit).toBe(cap);
    expect(p.giveBackAbove).toBe(Infinity);
    expect(p.excess(10 * cap, 10 * PREFETCH_GIVE_BACK_MS)).toBe(0);
  });

  it('counts only jobs a child ran: jobs settled at once without running (rate-limit defers) raise nothing', () => {
    const p = prefetch(processes);
    for (let i = 0; i < 20; i++) trip(p, Math.floor(p.limit / 2), 200, 10, 2, false);
    expect(p.cap).toBe(cap);
    expect(p.limit).toBeLessThanOrEqual(cap);
  });

  it('measures the rate over the replies that brought all they asked for: a quiet spell does not count', () => {
    const p = prefetch(processes);
    for (let i = 0; i < 20; i++) trip(p, Math.floor(p.limit / 2), 200, 10, 2);
    const quickCap = p.cap;
    // The queue runs dry (a short reply), stays quiet for a minute, then has a backlog again.
    p.sent(0);
    p.replied(0, p.limit, 1, 10);
    now += 60_000;
    trip(p, Math.floor(p.limit / 2), 200, 10, 2);
    trip(p, Math.floor(p.limit / 2), 200, 10, 2);
    expect(p.cap).toBe(quickCap);
  });

  it('gives back what quick jobs let it hold past the count cap once they turn slow, and measures afresh', () => {
    const p = prefetch(processes);
    for (let i = 0; i < 20; i++) trip(p, Math.floor(p.limit / 2), 200, 10, 2);
    expect(p.limit).toBeGreaterThan(cap);
    expect(p.giveBackAbove).toBe(cap);
    // Within the count cap, or not waited long: nothing.
    expect(p.excess(cap, 10 * PREFETCH_GIVE_BACK_MS)).toBe(0);
    expect(p.excess(p.limit, PREFETCH_GIVE_BACK_MS - 1)).toBe(0);
    expect(p.limit).toBeGreaterThan(cap);
    // Past it, after the wait: all of the rest. Asking changes nothing ...
    expect(p.excess(cap + 300, PREFETCH_GIVE_BACK_MS)).toBe(300);
    expect(p.limit).toBeGreaterThan(cap);
    // ... once given back, the limit falls to the count cap until a new rate is measured.
    p.gaveBack();
    expect(p.cap).toBe(cap);
    expect(p.limit).toBeLessThanOrEqual(cap);
    // Nothing a fetch took under the count cap since is given back.
    expect(p.excess(cap + 300, PREFETCH_GIVE_BACK_MS)).toBe(0);
    for (let i = 0; i < 20; i++) trip(p, Math.floor(p.limit / 2), 200, 10, 2);
    expect(p.limit).toBeGreaterThan(cap);
    expect(p.excess(cap + 300, PREFETCH_GIVE_BACK_MS)).toBe(300);
  });

  it('gives nothing back when only its line fell (larger payloads) and no fetch used the allowance', () => {
    const p = prefetch(processes);
    // Slow jobs: the limit stays within the count cap, and fetches hold that many.
    for (let i = 0; i < 30; i++) trip(p, Math.floor(p.limit / 2), 3);
    expect(p.limit).toBeLessThanOrEqual(cap);
    const held = p.limit;
    // Payloads grow: the line falls below what is held, though every job came under it.
    trip(p, Math.floor(p.limit / 2), 3, PREFETCH_MAX_BYTES / 4);
    expect(p.giveBackAbove).toBeLessThan(held);
    expect(p.excess(held, 10 * PREFETCH_GIVE_BACK_MS)).toBe(0);
  });

  it('a reply shorter than asked (the queue ran dry) changes nothing', () => {
    const p = prefetch(processes);
    p.sent(0);
    p.settled(0, true);
    p.replied(0, floor, 1, 10);
    expect(p.limit).toBe(floor);
  });
});

describe('FixedPrefetch', () => {
  it('keeps the limit it was given whatever happens, and never gives a job back', () => {
    const p: Prefetch = new FixedPrefetch(4, 2);
    p.sent(0);
    p.settled(0, true);
    p.replied(0, 8, 8, 80);
    expect(p.limit).toBe(8);
    expect(p.excess(1_000, 60_000)).toBe(0);
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
    const p = prefetch(2);
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
    const fresh = prefetch(5);
    fresh.resize(1);
    expect(fresh.limit).toBe(PREFETCH_FLOOR_PER_PROCESS);
  });
});
