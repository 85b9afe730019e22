import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobWithdrawnError, SoftTimeLimitExceeded } from 'prefork';
import { applyAndAwaitStart, fixture, pids, release, startPool, terminatePools } from '../helpers/pool.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'prefork-withdraw-'));
});
afterEach(async () => {
  await terminatePools();
  rmSync(dir, { recursive: true, force: true });
});

/** The names of the jobs that ran (each left a file in `dir`). */
function ran(): string[] {
  return readdirSync(dir).sort();
}

describe("withdraw() with fcfs: jobs already written into a child's pipe", () => {
  it('are given back unstarted (JobWithdrawnError) while the running job finishes; none of them ran', async () => {
    const pool = await startPool({ app: fixture('tasks-marks.mjs'), processes: 1, strategy: 'fcfs' });
    const [pid] = pids(pool);
    let started!: () => void;
    const firstStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const first = pool.apply('markAndBlock', [dir, 'job-0'], { onStart: () => started() });
    first.catch(() => undefined);
    const rest = Array.from({ length: 5 }, (_, i) => pool.apply('markAndBlock', [dir, `job-${i + 1}`]));
    const outcomes: PromiseSettledResult<unknown>[] = [];
    void Promise.allSettled(rest).then((all) => outcomes.push(...all));
    await firstStarted;
    // fcfs wrote every job into the one child's pipe: nothing is left in the pool's buffer.
    expect(pool.stats().outbound).toBe(0);
    expect(pool.withdraw()).toBe(0);
    // The child answers while its running job is still blocked.
    await expect.poll(() => outcomes.length, { message: 'the queued jobs to come back from the child' }).toBe(5);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(JobWithdrawnError);
    }
    release(pid!);
    await expect(first).resolves.toBe('job-0');
    await pool.close();
    expect(ran()).toEqual(['job-0']);
    expect(pool.stats().totals).toMatchObject({ applied: 6, done: 1, failed: 0 });
  });

  it("the Worker's warm stop (withdraw, then close at once) runs only the jobs already started", async () => {
    const pool = await startPool({ app: fixture('tasks-marks.mjs'), processes: 2, strategy: 'fcfs' });
    const starts: number[] = [];
    const jobs = Array.from({ length: 8 }, (_, i) =>
      pool.apply('markAndBlock', [dir, `job-${i}`], { onStart: (info) => starts.push(info.pid) }),
    );
    let settled = 0;
    for (const job of jobs)
      job.then(
        () => settled++,
        () => settled++,
      );
    await expect.poll(() => starts.length, { message: 'a child to start a job' }).toBeGreaterThan(0);
    pool.withdraw();
    const closed = pool.close();
    await expect
      .poll(() => settled === jobs.length - starts.length, { message: 'the unstarted jobs to come back' })
      .toBe(true);
    for (const pid of starts) release(pid);
    await closed;
    const outcomes = await Promise.allSettled(jobs);
    const done = outcomes
      .filter((o): o is PromiseFulfilledResult<string> => o.status === 'fulfilled')
      .map((o) => o.value);
    const withdrawn = outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof JobWithdrawnError);
    expect(done).toHaveLength(starts.length);
    expect(withdrawn).toHaveLength(jobs.length - starts.length);
    expect(ran()).toEqual(done.sort());
    expect(pids(pool)).toEqual([]);
  });

  it('after withdraw() the pool keeps serving new jobs on the same child', async () => {
    const pool = await startPool({ app: fixture('tasks-marks.mjs'), processes: 1, strategy: 'fcfs' });
    const [pid] = pids(pool);
    let started!: () => void;
    const firstStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const first = pool.apply('markAndBlock', [dir, 'a'], { onStart: () => started() });
    first.catch(() => undefined);
    const queued = pool.apply('mark', [dir, 'b']);
    await firstStarted;
    pool.withdraw();
    await expect(queued).rejects.toBeInstanceOf(JobWithdrawnError);
    release(pid!);
    await expect(first).resolves.toBe('a');
    await expect(pool.apply('mark', [dir, 'c'])).resolves.toBe('c');
    expect(pids(pool)).toEqual([pid]);
    expect(ran()).toEqual(['a', 'c']);
  });
});

describe('withdrawQueued(n): jobs still in the outbound buffer, the newest first', () => {
  it('rejects the last n queued with JobWithdrawnError and runs the rest in order', async () => {
    const pool = await startPool({ app: fixture('tasks-marks.mjs'), processes: 1, strategy: 'fair' });
    const first = applyAndAwaitStart(pool, 'markAndBlock', [dir, 'job-0']);
    const rest = Array.from({ length: 5 }, (_, i) => pool.apply('mark', [dir, `job-${i + 1}`]));
    const outcomes = Promise.allSettled(rest);
    const pid = await first.started;
    // fair holds the jobs behind a busy child in the pool's buffer (at most one goes ahead into its pipe).
    expect(pool.stats().outbound).toBeGreaterThanOrEqual(3);
    // The ids of the two taken (the pool's sequence numbers: no ApplyOptions.id).
    expect(pool.withdrawQueued(2)).toHaveLength(2);
    release(pid);
    await expect(first.result).resolves.toBe('job-0');
    const settled = await outcomes;
    expect(settled.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
    for (const o of settled.slice(3)) expect((o as PromiseRejectedResult).reason).toBeInstanceOf(JobWithdrawnError);
    expect(ran()).toEqual(['job-0', 'job-1', 'job-2', 'job-3']);
    expect(pool.stats().totals).toMatchObject({ applied: 6, done: 4, failed: 0 });
    // Nothing left to take: the child runs what it holds.
    expect(pool.withdrawQueued(10)).toEqual([]);
  });
});

describe('a child told to SHUTDOWN while its job runs (maxTasksPerChild)', () => {
  it('still gets the soft time limit: the job fails with SoftTimeLimitExceeded, not the hard limit', async () => {
    const pool = await startPool({ processes: 1, maxTasksPerChild: 1, softTimeLimit: 200, timeLimit: 10_000 });
    const [pid] = pids(pool);
    const err = await pool.apply('awaitAbort').then(
      () => new Error('expected the job to fail'),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(SoftTimeLimitExceeded);
    // The retired child then left by itself, and its replacement serves jobs.
    await expect.poll(() => pids(pool), { message: 'the retired child to exit' }).not.toContain(pid!);
    await expect(pool.apply('echo', [1])).resolves.toBe(1);
  });
});
