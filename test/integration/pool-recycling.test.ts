import { afterEach, describe, expect, it } from 'vitest';
import type { StrategyName } from 'prefork';
import { fixture, nextEvent, pids, recordEvents, startPool, terminatePools } from '../helpers/pool.js';
import { captureLog } from '../helpers/worker.js';

afterEach(terminatePools);

describe('recycling children', () => {
  it.each(['fair', 'fcfs'] as StrategyName[])(
    'maxTasksPerChild (%s): each child runs exactly N jobs, then is replaced; every job succeeds',
    async (strategy) => {
      const pool = await startPool({ processes: 1, maxTasksPerChild: 3, strategy });
      const downs = recordEvents(pool, 'process-down');
      const ran = (await Promise.all(Array.from({ length: 9 }, () => pool.apply('pid')))) as number[];
      const perPid = new Map<number, number>();
      for (const pid of ran) perPid.set(pid, (perPid.get(pid) ?? 0) + 1);
      expect([...perPid.values()]).toEqual([3, 3, 3]);
      // The third child retires after its third job too; its exit is an expected one, like the others'.
      await expect.poll(() => downs.length, { message: 'the three used-up children to exit' }).toBe(3);
      expect(downs.every((d) => d.expected && d.exitCode === 0)).toBe(true);
      expect(new Set(downs.map((d) => d.pid))).toEqual(new Set(perPid.keys()));
      expect(pool.stats().totals).toMatchObject({ done: 9, failed: 0, lost: 0 });
      await expect(pool.apply('pid')).resolves.not.toBe(ran[8]);
    },
  );

  it('maxMemoryPerChild below what a child takes once up: one warning naming both and the unit, at start', async () => {
    // 200000 is Celery's 200 MB (it counts KiB); here it is bytes: every child would go after each job.
    const small = captureLog();
    const pool = await startPool({ processes: 2, maxMemoryPerChild: 200000, logger: small.log });
    await expect.poll(() => small.lines.filter((l) => l.level === 40)).toHaveLength(1);
    const [warning] = small.lines.filter((l) => l.level === 40);
    expect(warning).toMatchObject({ maxMemoryPerChild: 200000, rss: expect.any(Number) as number });
    expect(warning!.msg).toMatch(/maxMemoryPerChild \(200000 bytes, 0\.2 MiB\) is below a child's RSS once it is up/);
    expect(warning!.msg).toContain("Celery's --max-memory-per-child counts KiB");
    await pool.close();
    // A limit above it: nothing said.
    const fine = captureLog();
    const other = await startPool({ processes: 2, maxMemoryPerChild: '1GiB', logger: fine.log });
    await other.apply('pid');
    expect(fine.lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
  });

  it('maxMemoryPerChild: the child that leaked past the limit finishes its job and is replaced', async () => {
    const pool = await startPool({ app: fixture('leaky.mjs'), processes: 1, maxMemoryPerChild: '150MiB' });
    const [first] = pids(pool);
    // A job that stays under the limit keeps its child.
    await expect(pool.apply('pid')).resolves.toBe(first);
    await expect(pool.apply('pid')).resolves.toBe(first);
    const down = nextEvent(pool, 'process-down', (e) => e.pid === first);
    await expect(pool.apply('leak', [256])).resolves.toBe(first);
    const [downEvent] = await down;
    expect(downEvent).toMatchObject({ pid: first, exitCode: 0, signal: null, expected: true });
    const next = await pool.apply('pid');
    expect(next).not.toBe(first);
    expect(pool.stats().totals).toMatchObject({ failed: 0, lost: 0 });
  });

  it.each([
    { strategy: 'fair' as StrategyName, maxTasksPerChild: undefined },
    { strategy: 'fcfs' as StrategyName, maxTasksPerChild: undefined },
    // The quota retires the child as its sixth job is written: it reads that SHUTDOWN before the leak ends.
    { strategy: 'fcfs' as StrategyName, maxTasksPerChild: 6 },
  ])(
    'maxMemoryPerChild ($strategy, maxTasksPerChild $maxTasksPerChild): no job written ahead to the child runs on it once it is over the limit; they run on its replacement',
    async ({ strategy, maxTasksPerChild }) => {
      const pool = await startPool({
        app: fixture('leaky.mjs'),
        processes: 1,
        maxMemoryPerChild: '150MiB',
        strategy,
        maxTasksPerChild,
      });
      const [first] = pids(pool);
      const down = nextEvent(pool, 'process-down', (e) => e.pid === first);
      // Applied together: fcfs writes them all into the one child's pipe behind the leak (fair may write some ahead).
      const leak = pool.apply('leakLater', [256, 50]);
      const after = Array.from({ length: 5 }, () => pool.apply('pid'));
      await expect(leak).resolves.toBe(first);
      const ranOn = (await Promise.all(after)) as number[];
      expect(ranOn.filter((pid) => pid === first)).toEqual([]);
      const [downEvent] = await down;
      expect(downEvent).toMatchObject({ pid: first, exitCode: 0, signal: null, expected: true });
      expect(pool.stats().totals).toMatchObject({ done: 6, failed: 0, lost: 0 });
    },
  );
});
