import { afterEach, describe, expect, it, vi } from 'vitest';
import { SPAWN_STEP } from '../../dist/pool/supervisor.js';
import { applyAndAwaitStart, makePool, nextEvent, pids, release, startPool, terminatePools } from '../helpers/pool.js';
import { OptionError } from 'prefork';

afterEach(terminatePools);

describe('start()', () => {
  it('resolves once `processes` children are up, each announced by process-up', async () => {
    const pool = makePool({ processes: 3 });
    const ups: number[] = [];
    pool.on('process-up', ({ pid }) => ups.push(pid));
    await pool.start();
    expect(ups.sort()).toEqual(pids(pool).sort());
    expect(pool.stats().processes.map((p) => p.state)).toEqual(['idle', 'idle', 'idle']);
  });
});

describe('grow and shrink', () => {
  it('grow(n) adds n children that become ready', async () => {
    const pool = await startPool({ processes: 1 });
    const [first] = pids(pool);
    const ups: number[] = [];
    pool.on('process-up', ({ pid }) => ups.push(pid));
    pool.grow(2);
    await vi.waitFor(() => expect(ups.length === 2, 'two new children to come up').toBe(true), {
      timeout: 20_000,
      interval: 20,
    });
    expect(pool.size).toBe(3);
    const procs = pool.stats().processes;
    expect(procs.map((p) => p.pid).sort()).toEqual([first!, ...ups].sort());
    expect(procs.every((p) => p.state === 'idle')).toBe(true);
    const ran = (await Promise.all(Array.from({ length: 30 }, () => pool.apply('pid')))) as number[];
    expect(ran.every((pid) => procs.some((p) => p.pid === pid))).toBe(true);
  });

  it('shrink takes idle children only: with one child busy, shrink(2) of two retires only the idle one, and the busy job still resolves', async () => {
    const pool = await startPool({ processes: 2 });
    const { result, started } = applyAndAwaitStart(pool, 'block');
    const busy = await started;
    const idle = pids(pool).find((pid) => pid !== busy)!;
    const idleDown = nextEvent(pool, 'process-down', (e) => e.pid === idle);

    expect(pool.shrink(2)).toBe(1);
    const [down] = await idleDown;
    expect(down).toMatchObject({ pid: idle, expected: true, exitCode: 0 });
    expect(pool.stats().processes).toMatchObject([{ pid: busy, state: 'busy' }]);

    release(busy);
    await expect(result).resolves.toBe(busy);
    expect(pool.stats().totals).toMatchObject({ done: 1, lost: 0, failed: 0 });
    expect(pool.size).toBe(1);
    await expect(pool.apply('pid')).resolves.toBe(busy);
  });

  it('shrink returns 0 and retires nobody when every child is busy', async () => {
    const pool = await startPool({ processes: 1 });
    const { result, started } = applyAndAwaitStart(pool, 'block');
    const busy = await started;
    expect(pool.shrink(1)).toBe(0);
    expect(pids(pool)).toEqual([busy]);
    release(busy);
    await expect(result).resolves.toBe(busy);
  });

  it('grow(n) stops at maxProcesses: it adds what fits and says how many', async () => {
    const pool = await startPool({ processes: 1, maxProcesses: 3 });
    expect(pool.grow(10)).toBe(2);
    expect(pool.size).toBe(3);
    await vi.waitFor(
      () =>
        expect(pool.stats().processes.filter((p) => p.state === 'idle').length === 3, 'three children up').toBe(true),
      { timeout: 20_000, interval: 20 },
    );
    expect(pool.grow(1)).toBe(0);
    expect(pool.stats().processes).toHaveLength(3);
  });

  it(`spawns in steps of at most SPAWN_STEP (${SPAWN_STEP}) children starting at once, the next as one comes up`, async () => {
    const pool = await startPool({ processes: 1, maxProcesses: 1 + SPAWN_STEP + 2 });
    const starting = (): number => pool.stats().processes.filter((p) => p.state === 'starting').length;
    const seen: number[] = [];
    pool.on('process-up', () => seen.push(starting()));
    expect(pool.grow(SPAWN_STEP + 2)).toBe(SPAWN_STEP + 2);
    seen.push(starting());
    expect(pool.size).toBe(1 + SPAWN_STEP + 2);
    await vi.waitFor(
      () =>
        expect(
          pool.stats().processes.filter((p) => p.state === 'idle').length === 1 + SPAWN_STEP + 2,
          'every child up',
        ).toBe(true),
      { timeout: 20_000, interval: 20 },
    );
    expect(seen[0]).toBe(SPAWN_STEP);
    expect(Math.max(...seen)).toBeLessThanOrEqual(SPAWN_STEP);
    expect(seen).toHaveLength(SPAWN_STEP + 3);
  });

  it('shrink takes children not spawned yet first: none that runs or starts is retired', async () => {
    const pool = await startPool({ processes: 1 });
    pool.grow(SPAWN_STEP + 2);
    const spawned = pids(pool);
    expect(spawned).toHaveLength(1 + SPAWN_STEP);
    expect(pool.shrink(2)).toBe(2);
    expect(pool.size).toBe(1 + SPAWN_STEP);
    await vi.waitFor(
      () =>
        expect(
          pool.stats().processes.filter((p) => p.state === 'idle').length === 1 + SPAWN_STEP,
          'the children still wanted up',
        ).toBe(true),
      { timeout: 20_000, interval: 20 },
    );
    expect(pids(pool).sort()).toEqual(spawned.sort());
  });

  it('shrink never takes a fixed pool below one child: shrink(5) of two retires one, and the next job still runs', async () => {
    const pool = await startPool({ processes: 2 });
    expect(pool.shrink(5)).toBe(1);
    expect(pool.size).toBe(1);
    expect(pool.shrink(1)).toBe(0);
    expect(pool.size).toBe(1);
    // With no child left, a fixed pool would hold this job for ever: nothing grows it back.
    await expect(pool.apply('echo', ['ran'])).resolves.toBe('ran');
    await expect.poll(() => pids(pool).length, { message: 'the retired child to exit' }).toBe(1);
  });

  it('grow and shrink reject a count that is not an integer >= 1', async () => {
    const pool = await startPool({ processes: 1 });
    expect(() => pool.grow(0)).toThrow(OptionError);
    expect(() => pool.shrink(1.5)).toThrow(OptionError);
    expect(() => pool.grow(0)).toThrow('grow(n): invalid option n: 0 (expected an integer from 1 to 2^53-1)');
  });
});

describe('stats()', () => {
  it("reports each child's pid, state, jobs done, current job with its runtime, rss, and the pool totals", async () => {
    const pool = await startPool({ processes: 2 });
    await pool.apply('echo', [1]);
    await expect(pool.apply('fail', ['x'])).rejects.toThrow('x');
    const { result, started } = applyAndAwaitStart(pool, 'block');
    const busy = await started;

    const stats = pool.stats();
    expect(stats.processes).toHaveLength(2);
    const running = stats.processes.find((p) => p.pid === busy)!;
    const other = stats.processes.find((p) => p.pid !== busy)!;
    expect(running.state).toBe('busy');
    expect(running.current).toMatchObject({ name: 'block' });
    expect(typeof running.current!.id).toBe('string');
    expect(running.current!.runtime).toBeGreaterThanOrEqual(0);
    expect(other.state).toBe('idle');
    expect(other.current).toBeNull();
    for (const p of stats.processes) {
      expect(p.rss).toBeGreaterThan(0);
      expect(Number.isInteger(p.jobsDone)).toBe(true);
    }
    expect(stats.processes.reduce((sum, p) => sum + p.jobsDone, 0)).toBe(2);
    expect(stats.totals).toEqual({ applied: 3, done: 1, failed: 1, lost: 0, restarts: 0 });
    expect(stats).toMatchObject({ reserved: 1, outbound: 0, strategy: 'fair', autoscale: undefined });

    release(busy);
    await result;
    const after = pool.stats();
    expect(after.processes.find((p) => p.pid === busy)).toMatchObject({ state: 'idle', current: null });
    expect(after.processes.reduce((sum, p) => sum + p.jobsDone, 0)).toBe(3);
    expect(after.totals).toMatchObject({ applied: 3, done: 2, failed: 1 });
    expect(after.reserved).toBe(0);
  });

  it('counts jobs waiting for a child in outbound and pending', async () => {
    const pool = await startPool({ processes: 1 });
    const first = applyAndAwaitStart(pool, 'block');
    const busy = await first.started;
    const waiting = [pool.apply('echo', [1]), pool.apply('echo', [2])];
    await Promise.resolve();
    expect(pool.stats()).toMatchObject({ reserved: 3, outbound: 2 });
    release(busy);
    await expect(Promise.all([first.result, ...waiting])).resolves.toEqual([busy, 1, 2]);
  });
});
