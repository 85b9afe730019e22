/**
 * Pool.reload(), SIGHUP's rolling reload: every child is replaced one at a
 * time while jobs run (fcfs, so jobs wait in each child's pipe too); no job
 * fails, each runs once, and the pool never runs short by more than one child.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, makePool, recordEvents, startPool, terminatePools } from '../helpers/pool.js';

const dirs: string[] = [];
afterEach(async () => {
  await terminatePools();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('Pool.reload()', () => {
  it('replaces every child, one at a time, while jobs run: none fails, each runs once', async () => {
    const pool = await startPool({ processes: 3, strategy: 'fcfs' });
    const before = pool.stats().processes.map((p) => p.pid);
    const ups = recordEvents(pool, 'process-up');
    const downs = recordEvents(pool, 'process-down');
    // Never fewer than size - 1 children up (the one retiring may still finish its jobs beside its replacement).
    let fewest = Infinity;
    const watch = (): void => {
      fewest = Math.min(fewest, pool.stats().processes.filter((p) => p.state === 'idle' || p.state === 'busy').length);
    };
    pool.on('process-up', watch);
    pool.on('process-down', watch);
    const jobs = Array.from({ length: 30 }, (_, i) => pool.apply('tally', [i]));
    const sleeps = Array.from({ length: 6 }, () => pool.apply('sleep', [150]));

    expect(await pool.reload()).toBe(3);
    const results = (await Promise.all(jobs)) as [number, number, number][];
    expect(results.map(([v]) => v)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    await Promise.all(sleeps);
    expect(pool.stats().totals).toMatchObject({ failed: 0, lost: 0, restarts: 0 });

    // The last child retired may still be on its way out: its exit is awaited before counting.
    await expect.poll(() => downs.length).toBe(3);
    expect(downs.every((d) => d.expected)).toBe(true);
    const after = pool.stats().processes.filter((p) => p.state !== 'exited');
    expect(after).toHaveLength(3);
    for (const p of after) expect(before).not.toContain(p.pid);
    expect(ups).toHaveLength(3);
    expect(fewest).toBeGreaterThanOrEqual(2);
  });

  it('finishes under recycling: with maxTasksPerChild 1 and a steady load, some child is nearly always starting', async () => {
    const pool = await startPool({ processes: 2, maxTasksPerChild: 1 });
    let stop = false;
    let done = 0;
    const feed = async (): Promise<void> => {
      while (!stop) {
        await pool.apply('tally', [1]);
        done++;
      }
    };
    const feeders = Array.from({ length: 4 }, feed);
    await expect.poll(() => done).toBeGreaterThan(2);
    const before = new Set(pool.stats().processes.map((p) => p.pid));
    // Each child there at the start is retired or recycled away; the reload then ends, the load still on.
    const replaced = await pool.reload();
    expect(replaced).toBeLessThanOrEqual(2);
    const after = pool.stats().processes.filter((p) => p.state === 'idle' || p.state === 'busy');
    for (const p of after) expect(before).not.toContain(p.pid);
    stop = true;
    await Promise.all(feeders);
    expect(pool.stats().totals).toMatchObject({ failed: 0, lost: 0 });
  });

  it('a call during a reload goes round once more; before start and after close it replaces nothing', async () => {
    expect(await makePool({ processes: 2 }).reload()).toBe(0);
    const pool = await startPool({ processes: 2 });
    const first = pool.reload();
    const second = pool.reload();
    expect(await first).toBe(4);
    expect(await second).toBe(4);
    await pool.close();
    expect(await pool.reload()).toBe(0);
  });

  it('ends a child still starting when its turn comes: its WORKER_UP is no protocol error, nothing is counted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefork-reload-'));
    dirs.push(dir);
    const hold = join(dir, 'hold');
    const pool = await startPool({ processes: 1, app: fixture('held-start.mjs'), env: { PREFORK_TEST_HOLD: hold } });
    const downs = recordEvents(pool, 'process-down');
    // One more child, held in start-up behind the one up: the reload reaches it while it still starts.
    writeFileSync(hold, '');
    pool.grow(1);
    await expect.poll(() => existsSync(hold), { message: 'the new child holds its start-up' }).toBe(false);
    const held = pool.stats().processes.find((p) => p.state === 'starting')?.pid;
    expect(held).toBeTypeOf('number');

    const reload = pool.reload();
    // Its turn: retired (told to go, or ended) once the replacement of the child before it is up.
    await expect
      .poll(() => pool.stats().processes.find((p) => p.pid === held)?.state ?? 'exited', {
        message: 'the reload retired the held child',
      })
      .not.toBe('starting');
    // It finishes loading: a WORKER_UP sent now must not be taken for a broken protocol.
    rmSync(`${hold}.${String(held)}`, { force: true });
    expect(await reload).toBe(2);
    await expect.poll(() => downs.some((d) => d.pid === held), { message: 'the held child exited' }).toBe(true);
    expect(downs.find((d) => d.pid === held)).toMatchObject({ expected: true, reason: 'retired' });
    expect(pool.stats().totals).toMatchObject({ failed: 0, lost: 0, restarts: 0 });
    expect(pool.running).toBe(true);
  });
});
