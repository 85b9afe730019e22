import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pool } from 'prefork';
import { applyAndAwaitStart, pids, release, startPool, terminatePools } from '../helpers/pool.js';
import { waitUntil } from '../helpers/wait.js';

const dirs: string[] = [];
afterEach(async () => {
  await terminatePools();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'prefork-lookahead-'));
  dirs.push(dir);
  return dir;
}

/**
 * Short jobs until the pool has seen enough of them finish to hold jobs ahead
 * (fair sizes that from job times): one per child at a time, so none is ever
 * held ahead, nor taken back, during the warm-up.
 */
async function warmUp(pool: Pool): Promise<void> {
  const children = pool.stats().processes.length;
  for (let round = 0; round < 250; round++)
    await Promise.all(Array.from({ length: children }, (_, i) => pool.apply('echo', [i])));
}

/** `tally` results: [value, pid, the child's count of jobs run]; every value once, or a job ran twice or never. */
function expectEachOnce(results: unknown[], values: number[]): void {
  expect(results.map((r) => (r as [number])[0])).toEqual(values);
  const runs = new Set(results.map((r) => `${(r as number[])[1]}:${(r as number[])[2]}`));
  expect(runs.size).toBe(values.length);
}

describe('fair: jobs a child holds ahead (its claim pipe)', () => {
  it('behind a job that blocks its child, they are taken back and run on the idle child, each once', async () => {
    const pool = await startPool({ processes: 2, strategy: 'fair' });
    const [first, second] = pids(pool);
    await warmUp(pool);
    const dir = tempDir();
    const go = join(dir, 'go');
    const spinning = pool.apply('spinUntil', [go]);
    const values = Array.from({ length: 150 }, (_, i) => i);
    const tallies = values.map((v) => pool.apply('tally', [v]));
    // The TaskHandler's pass runs in the microtask queued by apply(): its writes are done after this.
    await Promise.resolve();
    const held = new Map(pool.stats().processes.map((p) => [p.pid, p.held]));
    const results = await Promise.all(tallies);
    expect(existsSync(go)).toBe(false);
    writeFileSync(go, '');
    const spinner = (await spinning) as number;
    const other = spinner === first ? second : first;
    // The spinning child held more than its own job: jobs were written ahead to it ...
    expect(held.get(spinner)).toBeGreaterThan(1);
    // ... and every one ran on the other child, while the spinning one's event loop was blocked.
    expect(results.every((r) => (r as number[])[1] === other)).toBe(true);
    expectEachOnce(results, values);
    expect(pool.stats().totals).toMatchObject({ failed: 0, lost: 0 });
    expect(pool.stats().processes.map((p) => p.pid)).toEqual([first, second]);
  });

  it('behind a job that runs long while every child is busy, they go back to the buffer and then run in order', async () => {
    const pool = await startPool({ processes: 2, strategy: 'fair' });
    await warmUp(pool);
    const blocking = applyAndAwaitStart(pool, 'block');
    const blocker = await blocking.started;
    const dir = tempDir();
    const go = join(dir, 'go');
    const started = join(dir, 'started');
    const spinning = pool.apply('spinUntil', [go, started]);
    const values = Array.from({ length: 10 }, (_, i) => i);
    const tallies = values.map((v) => pool.apply('tally', [v]));
    await Promise.resolve();
    // Both children run a job that does not end by itself; the tallies were written ahead behind them.
    expect(pool.stats().outbound).toBe(0);
    // Neither child is idle: only the jobs' running long brings the tallies back to the buffer.
    await waitUntil(() => pool.stats().outbound === values.length, 'the tallies back in the outbound buffer');
    expect(pool.stats().processes.map((p) => p.held)).toEqual([1, 1]);
    release(blocker);
    const results = await Promise.all(tallies);
    // All on the released child, in the order they were applied, while the other still spins.
    expect(results.every((r) => (r as number[])[1] === blocker)).toBe(true);
    const counts = results.map((r) => (r as number[])[2] as number);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expectEachOnce(results, values);
    writeFileSync(go, '');
    await spinning;
    await expect(blocking.result).resolves.toBe(blocker);
  });

  it('withdraw() takes the jobs held ahead back at once, and the child drops them', async () => {
    const pool = await startPool({ processes: 1, strategy: 'fair' });
    await warmUp(pool);
    const blocking = applyAndAwaitStart(pool, 'block');
    const blocker = await blocking.started;
    const waiting = Array.from({ length: 5 }, (_, i) => pool.apply('tally', [i]));
    for (const p of waiting) p.catch(() => undefined);
    await Promise.resolve();
    // Jobs were written ahead behind the blocker: how many is fair's to size from the warm-up's job times
    // (FAIR_AHEAD_MS of them; it was 6 here until a busy host made the echoes slower). The rest wait in the buffer.
    expect(pool.stats().processes[0]?.held).toBeGreaterThan(1);
    // Both go at once: those held ahead through the claim pipe, those in the buffer from it.
    expect(pool.withdraw()).toBe(5);
    for (const job of waiting) await expect(job).rejects.toMatchObject({ name: 'JobWithdrawnError' });
    expect(pool.stats().processes[0]?.held).toBe(1);
    release(blocker);
    await expect(blocking.result).resolves.toBe(blocker);
    // The child dropped them (none ran) and takes new jobs again.
    const after = (await pool.apply('tally', [99])) as number[];
    expect(after[0]).toBe(99);
    expect(after[1]).toBe(blocker);
    expect(pool.stats().totals).toMatchObject({ failed: 0, lost: 0 });
  });
});
