import { afterEach, describe, expect, it } from 'vitest';
import { InvalidStateError, type ScaleEvent } from 'prefork';
import {
  applyAndAwaitStart,
  makePool,
  nextEvent,
  pids,
  recordEvents,
  release,
  startPool,
  terminatePools,
} from '../helpers/pool.js';

afterEach(terminatePools);

describe('Autoscaler', () => {
  it('starts at min, grows under a burst (never above max), shrinks back to min after keepalive, and never kills a busy child', async () => {
    const pool = await startPool({ autoscale: '4,1', keepalive: 200, autoscaleInterval: 50 });
    expect(pids(pool)).toHaveLength(1);
    expect(pool.stats().autoscale).toEqual({ max: 4, min: 1 });
    const events: ScaleEvent[] = recordEvents(pool, 'autoscale');
    const lost = recordEvents(pool, 'job-lost');
    let largest = 0;
    pool.on('process-up', () => {
      largest = Math.max(largest, pool.size);
    });

    const burst = Array.from({ length: 40 }, (_, i) => pool.apply('sleep', [20 + (i % 5)]));
    for (const p of burst) p.catch(() => undefined);
    // Each apply() re-evaluates: the pool follows the reserved count up to max at once, without waiting for a tick.
    const ups = events.filter((e) => e.direction === 'up');
    expect(ups.length).toBeGreaterThanOrEqual(1);
    expect(ups[0]!.from).toBe(1);
    expect(ups.at(-1)!.to).toBe(4);
    expect(pool.size).toBe(4);
    await Promise.all(burst);

    await expect
      .poll(() => events.some((e) => e.direction === 'down') && pool.size === 1, {
        message: 'the pool to shrink back to 1',
      })
      .toBe(true);
    await expect.poll(() => pids(pool).length, { message: 'the retired children to exit' }).toBe(1);
    for (const e of events) {
      expect(e.to).toBeLessThanOrEqual(4);
      expect(e.to).toBeGreaterThanOrEqual(1);
    }
    expect(largest).toBeLessThanOrEqual(4);
    const downs = events.filter((e) => e.direction === 'down');
    expect(downs.at(-1)!.to).toBe(1);
    expect(lost).toEqual([]);
    expect(pool.stats().totals).toMatchObject({ applied: 40, done: 40, failed: 0, lost: 0 });
  });

  it('with min = 0 starts one child (the tasks known), retires it after keepalive; shrinks to the reserved count by retiring the idle child and keeps the busy one; then to min = 0', async () => {
    // A keepalive shorter than a child's boot: the child start() waits for is not retired before it is up.
    const pool = makePool({ autoscale: '2,0', keepalive: 100, autoscaleInterval: 30 });
    const events: ScaleEvent[] = recordEvents(pool, 'autoscale');
    await pool.start();
    // One child loaded the module: its tasks are known before any job comes.
    expect(pool.taskNames).toContain('block');
    await expect.poll(() => pids(pool), { message: 'the idle first child retired after keepalive' }).toEqual([]);
    expect(events).toMatchObject([{ direction: 'down', from: 1, to: 0, reserved: 0 }]);
    events.length = 0;
    const job = applyAndAwaitStart(pool, 'block');
    const busy = await job.started;
    expect(events[0]).toMatchObject({ direction: 'up', from: 0, to: 1, reserved: 1 });
    // A second child with nothing to do: reserved (1) is now below the size (2). It may still be
    // starting when keepalive passes; either way it is the one to go, never the busy one.
    pool.grow(1);
    const idle = pids(pool).find((pid) => pid !== busy)!;
    expect(idle).toBeDefined();

    await expect
      .poll(() => events.some((e) => e.direction === 'down'), { message: 'a scale-down after keepalive' })
      .toBe(true);
    expect(events.find((e) => e.direction === 'down')).toMatchObject({ from: 2, to: 1, reserved: 1 });
    await expect.poll(() => pids(pool), { message: 'the idle child to exit' }).not.toContain(idle);
    expect(pool.stats().processes).toMatchObject([{ pid: busy, state: 'busy' }]);

    release(busy);
    await expect(job.result).resolves.toBe(busy);
    await expect.poll(() => pids(pool).length, { message: 'the pool to shrink to min = 0 once idle' }).toBe(0);
    expect(events.at(-1)).toMatchObject({ direction: 'down', to: 0, reserved: 0 });
    expect(pool.stats().totals).toMatchObject({ done: 1, lost: 0, failed: 0 });
  });

  it('setAutoscale() moves the pool into new bounds at once', async () => {
    const pool = await startPool({ autoscale: '2,1', keepalive: 60_000, autoscaleInterval: 50 });
    const events: ScaleEvent[] = recordEvents(pool, 'autoscale');
    pool.setAutoscale(4, 3);
    expect(pool.stats().autoscale).toEqual({ max: 4, min: 3 });
    expect(events[0]).toMatchObject({ direction: 'up', from: 1, to: 3 });
    await expect
      .poll(() => pool.stats().processes.filter((p) => p.state === 'idle').length, { message: 'three idle children' })
      .toBe(3);
  });

  it('grow() past max raises max, and the Autoscaler keeps the children; shrink() stops at min; each is a resize event', async () => {
    const pool = await startPool({ autoscale: '2,1', keepalive: 60_000, autoscaleInterval: 20 });
    const resizes = recordEvents(pool, 'resize');
    const scales: ScaleEvent[] = recordEvents(pool, 'autoscale');
    expect(pool.grow(3)).toBe(3);
    expect(pool.stats().autoscale).toEqual({ max: 4, min: 1 });
    await expect
      .poll(() => pool.stats().processes.filter((p) => p.state === 'idle').length, { message: 'four idle children' })
      .toBe(4);
    // Ticks of the Autoscaler (every 20 ms) came while they booted: none cut the pool back to the old max.
    expect(scales).toEqual([]);
    expect(pool.size).toBe(4);
    expect(pool.shrink(10)).toBe(3);
    expect(pool.size).toBe(1);
    expect(pool.shrink(1)).toBe(0);
    expect(resizes).toEqual([
      { processes: 4, autoscale: { max: 4, min: 1 } },
      { processes: 1, autoscale: { max: 4, min: 1 } },
    ]);
  });

  it('start() resolves when a shrink to min 0 retires every child still starting, and a job then grows the pool', async () => {
    const pool = makePool({ autoscale: '4,2', keepalive: 60_000 });
    let settled = false;
    const started = pool.start().finally(() => (settled = true));
    const booting = pids(pool);
    expect(booting).toHaveLength(2);
    const downs = booting.map((pid) => nextEvent(pool, 'process-down', (e) => e.pid === pid));
    pool.setAutoscale(4, 0);
    expect(pool.shrink(2)).toBe(2);
    await Promise.all(downs);
    // No child is left to send WORKER_UP: start() must not wait for one (a Worker would never run).
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(true);
    await expect(started).resolves.toBeUndefined();
    await expect(pool.apply('echo', ['grown'])).resolves.toBe('grown');
  });

  it('setAutoscale() refuses a max above maxProcesses, naming it', async () => {
    const pool = await startPool({ autoscale: '2,1', maxProcesses: 3 });
    expect(() => pool.setAutoscale(4, 1)).toThrow(/maxProcesses \(3\)/);
    expect(pool.stats().autoscale).toEqual({ max: 2, min: 1 });
  });

  it('setAutoscale() on a pool without autoscale throws', async () => {
    const pool = await startPool({ processes: 1 });
    expect(() => pool.setAutoscale(2, 1)).toThrow(/autoscale/);
    // Not a closed pool: a call this pool's state does not allow.
    expect(() => pool.setAutoscale(2, 1)).toThrow(InvalidStateError);
  });

  it.each([
    [1, 3],
    [0, 0],
    [2.5, 1],
    [4, -1],
  ])(
    'setAutoscale(%d, %d) is rejected like the option, and the bounds and size stay as they were',
    async (max, min) => {
      const pool = await startPool({ autoscale: '2,1', keepalive: 60_000, autoscaleInterval: 50 });
      const events: ScaleEvent[] = recordEvents(pool, 'autoscale');
      expect(() => pool.setAutoscale(max, min)).toThrow(/autoscale/);
      expect(pool.stats().autoscale).toEqual({ max: 2, min: 1 });
      expect(events).toEqual([]);
      expect(pool.size).toBe(1);
    },
  );
});
