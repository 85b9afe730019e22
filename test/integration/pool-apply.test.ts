import { pack } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import { JobWithdrawnError, OptionError, TimeLimitExceeded, type StrategyName } from 'prefork';
import { applyAndAwaitStart, fixture, makePool, pids, release, startPool, terminatePools } from '../helpers/pool.js';

afterEach(terminatePools);

describe('Pool.apply', () => {
  it('resolves with the values the tasks return', async () => {
    const pool = await startPool({ processes: 2 });
    const nested = { list: [1, 'two', null, true], map: { a: 1.5 }, bytes: new Uint8Array([1, 2, 3]) };
    await expect(pool.apply('add', [2, 40])).resolves.toBe(42);
    await expect(pool.apply('echo', ['hello'])).resolves.toBe('hello');
    await expect(pool.apply('echo', [nested])).resolves.toEqual(nested);
    await expect(pool.apply('sleep', [5])).resolves.toBe(5);
    await expect(pool.apply('rejects', ['async failure'])).rejects.toThrow('async failure');
  });

  it.each(['fair', 'fcfs'] as StrategyName[])(
    'with %s, runs every one of 3000 jobs exactly once and returns each its own result',
    async (strategy) => {
      const pool = await startPool({ processes: 2, strategy });
      const n = 3000;
      const results = (await Promise.all(Array.from({ length: n }, (_, i) => pool.apply('tally', [i])))) as [
        number,
        number,
        number,
      ][];
      results.forEach(([value], i) => expect(value).toBe(i));
      expect(results.reduce((sum, [value]) => sum + value, 0)).toBe((n * (n - 1)) / 2);
      // Each child numbers the jobs it executes 1, 2, 3...: the counts add up to n only if nothing ran twice.
      const executedPerChild = new Map<number, number[]>();
      for (const [, pid, count] of results) executedPerChild.set(pid, [...(executedPerChild.get(pid) ?? []), count]);
      let executed = 0;
      for (const counts of executedPerChild.values()) {
        counts.sort((a, b) => a - b);
        expect(counts).toEqual(Array.from({ length: counts.length }, (_, i) => i + 1));
        executed += counts.length;
      }
      expect(executed).toBe(n);
      expect([...executedPerChild.keys()].every((pid) => pids(pool).includes(pid))).toBe(true);
      expect(pool.stats().totals).toMatchObject({ applied: n, done: n, failed: 0, lost: 0 });
    },
  );

  it('buffers jobs applied before start() and runs them once the children are up', async () => {
    const pool = makePool({ processes: 1 });
    const early = pool.apply('add', [1, 1]);
    await pool.start();
    await expect(early).resolves.toBe(2);
  });

  it('gives the task its id, name, queue and retries through currentTask()', async () => {
    const pool = await startPool({ processes: 1 });
    await expect(pool.apply('context', [], { id: 'job-42', queue: 'emails', retries: 2 })).resolves.toEqual({
      id: 'job-42',
      name: 'context',
      queue: 'emails',
      retries: 2,
      aborted: false,
    });
  });

  it('gives currentTask() a default id, no queue and zero retries when apply has no options', async () => {
    const pool = await startPool({ processes: 1 });
    const a = (await pool.apply('context')) as { id: string; queue: unknown; retries: number };
    const b = (await pool.apply('context')) as { id: string };
    expect(a).toMatchObject({ name: 'context', queue: null, retries: 0 });
    expect(typeof a.id).toBe('string');
    expect(a.id.length).toBeGreaterThan(0);
    expect(b.id).not.toBe(a.id);
  });

  it('accepts msgpack-encoded argument bytes and decodes them in the child', async () => {
    const pool = await startPool({ processes: 1 });
    await expect(pool.apply('add', pack([1, 2]))).resolves.toBe(3);
    await expect(pool.apply('echo', pack([{ deep: ['x', 1] }]))).resolves.toEqual({ deep: ['x', 1] });
  });

  it('rejects a non-array, non-bytes args value and an empty task name', async () => {
    const pool = await startPool({ processes: 1 });
    await expect(pool.apply('echo', 'oops' as unknown as unknown[])).rejects.toThrow(OptionError);
    await expect(pool.apply('', [])).rejects.toThrow(OptionError);
    await expect(pool.apply('', [])).rejects.toThrow('apply(): invalid option name: ""');
  });

  it('keeps outq intact when a task writes to stdout: later jobs on the same child succeed', async () => {
    const pool = await startPool({ app: fixture('noisy-stdout.mjs'), processes: 1 });
    const [pid] = pids(pool);
    await expect(pool.apply('noisy', [1])).resolves.toBe(1);
    const after = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.apply(i % 2 ? 'noisy' : 'echo', [i])));
    expect(after).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(pids(pool)).toEqual([pid]);
    expect(pool.stats().totals).toMatchObject({ failed: 0, lost: 0, restarts: 0 });
  });

  it('carries large arguments and results intact across the pipes', async () => {
    const pool = await startPool({ processes: 2, strategy: 'fcfs' });
    const big = 'z'.repeat(5 * 1024 * 1024);
    const [len, made] = await Promise.all([pool.apply('length', [big]), pool.apply('repeat', ['ab', 3 * 1024 * 1024])]);
    expect(len).toBe(big.length);
    expect(made).toBe('ab'.repeat(3 * 1024 * 1024));
  });

  it('writes nothing more to a child whose pipe is full until it drains, and then runs everything', async () => {
    const pool = await startPool({ processes: 1, strategy: 'fcfs' });
    const chunk = 'q'.repeat(1024 * 1024);
    const first = Array.from({ length: 8 }, () => pool.apply('length', [chunk]));
    // One batch of 8 MiB went into the pipe and filled it; the next job must wait in the outbound buffer.
    await Promise.resolve();
    const later = pool.apply('echo', ['after the flood']);
    await Promise.resolve();
    expect(pool.stats().outbound).toBe(1);
    await expect(Promise.all(first)).resolves.toEqual(Array.from({ length: 8 }, () => chunk.length));
    await expect(later).resolves.toBe('after the flood');
  });

  it('with fair, never queues a job behind a busy child: short jobs all run on the free one', async () => {
    const pool = await startPool({ processes: 2, strategy: 'fair' });
    const long = applyAndAwaitStart(pool, 'block');
    const busy = await long.started;
    const free = pids(pool).find((pid) => pid !== busy);
    const short = (await Promise.all(Array.from({ length: 20 }, () => pool.apply('pid')))) as number[];
    expect(short.every((pid) => pid === free)).toBe(true);
    release(busy);
    await expect(long.result).resolves.toBe(busy);
  });

  it('knows the task names the app registers once a child is up', async () => {
    const pool = await startPool({ app: fixture('tasks-with-options.mjs'), processes: 1 });
    expect([...pool.taskNames].sort()).toEqual(['echo', 'slowWithLimit']);
  });
});

describe('per-task options declared with defineTasks', () => {
  it('are reported by taskOptions()', async () => {
    const pool = await startPool({ app: fixture('tasks-with-options.mjs'), processes: 1 });
    expect(pool.taskOptions('slowWithLimit')).toEqual({ timeLimit: 250, retries: 2 });
    expect(pool.taskOptions('echo')).toBeUndefined();
  });

  it("a task's own timeLimit ends its jobs with TimeLimitExceeded, and the child is replaced", async () => {
    const pool = await startPool({ app: fixture('tasks-with-options.mjs'), processes: 1 });
    const [victim] = pids(pool);
    const err = await pool.apply('slowWithLimit').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeLimitExceeded);
    expect(err).toMatchObject({ limitMs: 250 });
    await expect(pool.apply('echo', [1])).resolves.toBe(1);
    expect(pids(pool)).not.toContain(victim);
  });

  it("a job's own timeLimit wins over the task's", async () => {
    const pool = await startPool({ app: fixture('tasks-with-options.mjs'), processes: 1 });
    const err = await pool.apply('slowWithLimit', [], { timeLimit: 100 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ limitMs: 100 });
  });
});

describe('withdraw()', () => {
  it('takes back the jobs not yet written to a child, rejecting them with JobWithdrawnError, without counting failures', async () => {
    const pool = await startPool({ processes: 1 });
    const running = applyAndAwaitStart(pool, 'block');
    const busy = await running.started;
    const waiting = [pool.apply('echo', [1]), pool.apply('echo', [2]), pool.apply('echo', [3])];
    for (const p of waiting) p.catch(() => undefined);
    await Promise.resolve();
    expect(pool.withdraw()).toBe(3);
    for (const job of waiting) await expect(job).rejects.toBeInstanceOf(JobWithdrawnError);
    expect(pool.stats()).toMatchObject({ outbound: 0, reserved: 1 });
    expect(pool.stats().totals.failed).toBe(0);
    release(busy);
    await expect(running.result).resolves.toBe(busy);
    expect(pool.withdraw()).toBe(0);
  });
});

describe('apply() options', () => {
  it('are validated: an unknown or bad option rejects the job with OptionError naming it; nothing reaches a child', async () => {
    const pool = await startPool({ processes: 1 });
    const bad = [
      [{ timelimit: 100 }, 'timelimit'],
      [{ timeLimit: 2 ** 31 }, 'timeLimit'],
      [{ timeLimit: 'later' }, 'timeLimit'],
      [{ retries: '2' }, 'retries'],
    ] as const;
    for (const [options, option] of bad) {
      const err = await pool.apply('echo', [1], options as never).then(
        () => new Error('expected a rejection'),
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(OptionError);
      expect((err as OptionError).option).toBe(option);
    }
    expect(pool.stats().totals).toMatchObject({ applied: 0, failed: 0 });
    expect(pool.reserved).toBe(0);
    await expect(pool.apply('echo', [2])).resolves.toBe(2);
  });

  it('take a time limit as a duration string', async () => {
    const pool = await startPool({ processes: 1 });
    const err = await pool.apply('hang', [], { timeLimit: '300ms' }).then(
      () => new Error('expected a rejection'),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(TimeLimitExceeded);
    expect((err as TimeLimitExceeded).limitMs).toBe(300);
  });
});
