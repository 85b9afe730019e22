/**
 * How a child tells its parent that a job started: a short job costs the
 * parent one read (its RESULT says the start), while a long one's start is
 * still known as it runs, for onStart, time limits and a death mid-job.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { TimeLimitExceeded, WorkerLostError } from 'prefork';
import { fixture, nextEvent, pids, startPool, terminatePools } from '../helpers/pool.js';

afterEach(terminatePools);

const dir = mkdtempSync(join(tmpdir(), 'prefork-start-notice-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
/** A path that does not exist yet: `spinUntil` spins until it is created. */
const gate = (): string => join(dir, `gate-${++files}`);
const open = (path: string): void => writeFileSync(path, '');

async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the job to fail, but it succeeded');
}

describe('a short job', () => {
  it('wakes the parent once, for its RESULT: no read of its own for the start, and onStart still runs before it settles', async () => {
    const pool = await startPool({ processes: 1 });
    await pool.apply('echo', [0]);
    const before = pool.stats().processes[0]!.reads;
    const order: string[] = [];
    for (let i = 1; i <= 50; i++) {
      const result = await pool.apply('echo', [i], {
        onStart: ({ startedAt }) => order.push(startedAt > 0 ? `start ${i}` : 'no start time'),
      });
      order.push(`done ${String(result)}`);
    }
    expect(pool.stats().processes[0]!.reads - before).toBe(50);
    expect(order).toEqual(Array.from({ length: 50 }, (_, k) => [`start ${k + 1}`, `done ${k + 1}`]).flat());
  });
});

describe('a long synchronous job (its event loop blocked)', () => {
  it('is known to have started while it runs: onStart fires, stats show it', async () => {
    const pool = await startPool({ processes: 1 });
    const path = gate();
    let started: { pid: number; startedAt: number } | undefined;
    const result = pool.apply('spinUntil', [path], { onStart: (info) => (started = info) });
    await vi.waitFor(() => expect(started).toBeDefined());
    expect(started!.pid).toBe(pids(pool)[0]);
    expect(pool.stats().processes[0]!.current?.name).toBe('spinUntil');
    expect(existsSync(path)).toBe(false);
    open(path);
    await expect(result).resolves.toBe(started!.pid);
  });

  it('SIGKILLed mid-job: it fails with WorkerLostError, the job queued behind it in the pipe runs elsewhere and fails nothing', async () => {
    const pool = await startPool({ processes: 1, strategy: 'fcfs' });
    const [victim] = pids(pool);
    const marker = gate();
    // No onStart, no stats(): nothing asks for the start before the death, which reads it from the child's start record.
    const running = pool.apply('spinUntil', [gate(), marker]);
    running.catch(() => undefined);
    const queued = pool.apply('pid');
    await vi.waitFor(() => expect(existsSync(marker)).toBe(true));
    process.kill(victim!, 'SIGKILL');
    const err = await rejectionOf(running);
    expect(err).toBeInstanceOf(WorkerLostError);
    expect(err).toMatchObject({ pid: victim, signal: 'SIGKILL' });
    const ranOn = await queued;
    expect(ranOn).not.toBe(victim);
    expect(pool.stats().totals).toMatchObject({ lost: 1, failed: 1, done: 1 });
  });

  it('its hard time limit counts from its start: a job queued behind a longer one is not cut short for the wait', async () => {
    const pool = await startPool({ processes: 1, strategy: 'fcfs' });
    const path = gate();
    const events: string[] = [];
    const first = pool.apply('spinUntil', [path]).then(() => events.push('first done'));
    const second = pool.apply('spinUntil', [gate()], { timeLimit: 300 });
    const secondErr = rejectionOf(second).then((err) => {
      events.push('second failed');
      return err;
    });
    await expect.poll(() => pool.stats().processes[0]!.current?.name).toBe('spinUntil');
    // Longer than the second job's limit, which has not started: its limit must not run meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(events).toEqual([]);
    open(path);
    await first;
    expect(await secondErr).toBeInstanceOf(TimeLimitExceeded);
    expect(events).toEqual(['first done', 'second failed']);
  });

  it('started from idle, its hard time limit fires although the parent never saw an ACK: the parent kills the child, not its watchdog', async () => {
    const pool = await startPool({ processes: 1 });
    const [victim] = pids(pool);
    const down = nextEvent(pool, 'process-down', (e) => e.pid === victim);
    const err = await rejectionOf(pool.apply('spinUntil', [gate()], { timeLimit: 200 }));
    expect(err).toBeInstanceOf(TimeLimitExceeded);
    expect(await down).toEqual([
      { pid: victim, exitCode: null, signal: 'SIGKILL', expected: true, reason: 'time-limit' },
    ]);
    await expect(pool.apply('add', [1, 2])).resolves.toBe(3);
  });
});

describe('frame orders the parent accepts', () => {
  it('an ACK that arrives after its RESULT is ignored: the child is not taken for broken', async () => {
    const pool = await startPool({ app: fixture('late-ack.mjs'), processes: 1 });
    const [child] = pids(pool);
    expect(await pool.apply('pid')).toBe(child);
    expect(await pool.apply('ackPrevious')).toBe(child);
    expect(await pool.apply('pid')).toBe(child);
    expect(pool.stats().totals).toMatchObject({ failed: 0, lost: 0, restarts: 0 });
  });
});
