/**
 * The TimeoutHandler counts a job's limits on the monotonic clock once it
 * armed them: a step of the wall clock while the job runs (NTP, a VM
 * resumed, an operator's `date`) neither delays a limit nor brings it
 * forward. Fake timers: timers and performance.now() advance together,
 * and vi.setSystemTime() steps Date.now() alone, as a real clock step does.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TimeoutHandler } from '../../../dist/pool/timeout-handler.js';
import type { PoolJob } from '../../../dist/pool/job.js';
import type { WorkerProcess } from '../../../dist/pool/worker-process.js';

const proc = {} as WorkerProcess;

/** A job with these limits whose start the parent learns when it asks (startOf). */
function setup(limits: { timeLimit?: number; softTimeLimit?: number }) {
  const job = { name: 'slow', options: limits, startedAt: 0 } as unknown as PoolJob & { startedAt: number };
  const fired: string[] = [];
  const handler = new TimeoutHandler(undefined, undefined, () => undefined, {
    onHardTimeout: () => fired.push('hard'),
    onSoftTimeout: () => fired.push('soft'),
    startOf: () => job.startedAt,
  });
  return { job, fired, handler };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('TimeoutHandler and a wall clock that steps', () => {
  it.each([
    ['back', -60_000],
    ['forward', 60_000],
  ])('a clock stepped %s while the job runs: each limit fires once the job ran that long', (_, step) => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'performance'] });
    const { job, fired, handler } = setup({ timeLimit: 2_000, softTimeLimit: 1_000 });
    job.startedAt = Date.now();
    handler.start(proc, job, job.startedAt);
    vi.advanceTimersByTime(500);
    vi.setSystemTime(Date.now() + step);
    vi.advanceTimersByTime(499);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['soft']);
    vi.advanceTimersByTime(999);
    expect(fired).toEqual(['soft']);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['soft', 'hard']);
  });

  it('a job armed before its start is known counts from the start it learns, not from the arming', () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'performance'] });
    const { job, fired, handler } = setup({ timeLimit: 1_000 });
    handler.start(proc, job, Date.now());
    vi.advanceTimersByTime(300);
    // It started 300 ms after it was written; the clock then steps back a minute.
    job.startedAt = Date.now();
    vi.setSystemTime(Date.now() - 60_000);
    vi.advanceTimersByTime(999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['hard']);
  });

  it('a start stamped a month ahead (the clock stepped back after the child stamped it): the limit counts from now', () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout', 'performance'] });
    const { job, fired, handler } = setup({ timeLimit: 1_000, softTimeLimit: 500 });
    const month = 30 * 24 * 3600_000;
    job.startedAt = Date.now() + month;
    handler.start(proc, job, job.startedAt);
    vi.advanceTimersByTime(499);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['soft']);
    vi.advanceTimersByTime(500);
    expect(fired).toEqual(['soft', 'hard']);
  });
});
