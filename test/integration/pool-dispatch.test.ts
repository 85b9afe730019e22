import { afterEach, describe, expect, it } from 'vitest';
import type { StrategyName } from 'prefork';
import { applyAndAwaitStart, pids, release, startPool, terminatePools } from '../helpers/pool.js';

afterEach(terminatePools);

describe('which child gets a job (TaskHandler)', () => {
  it.each(['fair', 'fcfs'] as StrategyName[])(
    'with %s and one job in flight at a time, keeps using the first idle child',
    async (strategy) => {
      const pool = await startPool({ processes: 3, strategy });
      const [first] = pids(pool);
      const ran: unknown[] = [];
      for (let i = 0; i < 12; i++) ran.push(await pool.apply('pid'));
      expect(ran).toEqual(Array.from({ length: 12 }, () => first));
    },
  );

  it('with fcfs, a burst still reaches every child', async () => {
    const pool = await startPool({ processes: 2, strategy: 'fcfs' });
    const ran = (await Promise.all(Array.from({ length: 600 }, () => pool.apply('pid')))) as number[];
    expect(new Set(ran)).toEqual(new Set(pids(pool)));
  });

  it('with fcfs, a burst is shared out evenly, its end included', async () => {
    const pool = await startPool({ processes: 2, strategy: 'fcfs' });
    // 1,000 is no multiple of two batches of 256: dealt out by batches alone, one child would get 24 more.
    const ran = (await Promise.all(Array.from({ length: 1_000 }, () => pool.apply('pid')))) as number[];
    const counts = pids(pool).map((pid) => ran.filter((p) => p === pid).length);
    expect(counts).toEqual([500, 500]);
  });

  it('with fcfs, a burst smaller than a batch is shared among the idle children', async () => {
    const pool = await startPool({ processes: 2, strategy: 'fcfs' });
    // 40 jobs fit in one write: a broker's fetch brings batches like this, and one child alone would run them all.
    const ran = (await Promise.all(Array.from({ length: 40 }, () => pool.apply('pid')))) as number[];
    const counts = pids(pool).map((pid) => ran.filter((p) => p === pid).length);
    expect(counts).toEqual([20, 20]);
  });

  it('with fair, two jobs at once start on two children', async () => {
    const pool = await startPool({ processes: 2, strategy: 'fair' });
    const a = applyAndAwaitStart(pool, 'block');
    const b = applyAndAwaitStart(pool, 'block');
    const started = await Promise.all([a.started, b.started]);
    expect(new Set(started)).toEqual(new Set(pids(pool)));
    for (const pid of started) release(pid);
    await expect(Promise.all([a.result, b.result])).resolves.toEqual(started);
  });
});
