/**
 * Pool.cancel with terminate when the job has started in its child but the
 * parent has not read the start yet (its ACK still in the pipe): the job must
 * still be stopped, its signal aborted and its child killed after the grace.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixture, pids, recordEvents, release, startPool, terminatePools } from '../helpers/pool.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'prefork-cancel-'));
});
afterEach(async () => {
  await terminatePools();
  rmSync(dir, { recursive: true, force: true });
});

/** Blocks this process (so it reads no pipe) until `path` exists. */
function blockUntilExists(path: string): void {
  const until = Date.now() + 60_000;
  while (!existsSync(path)) {
    if (Date.now() > until) throw new Error(`${path} never appeared`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
  }
}

describe('cancel with terminate', () => {
  it('stops a job whose start the parent has not read yet: its child is killed after the grace, nothing else fails', async () => {
    const pool = await startPool({ app: fixture('tasks-marks.mjs'), processes: 1, strategy: 'fcfs' });
    const [pid] = pids(pool);
    const downs = recordEvents(pool, 'process-down');
    const first = pool.apply('markAndBlock', [dir, 'a'], { id: 'a' });
    // Ignores its signal: only a kill stops it.
    const second = pool.apply('markAndBlock', [dir, 'b'], { id: 'b' });
    second.catch(() => undefined);
    await expect.poll(() => existsSync(join(dir, 'a'))).toBe(true);
    // While this process reads nothing, `a` ends and `b` starts: b's ACK rides with a's RESULT, unread.
    release(pid!);
    blockUntilExists(join(dir, 'b'));
    const reason = new Error('revoked with terminate');
    expect(pool.cancel('b', reason, { grace: 200 })).toEqual({ unstarted: 1, running: 0 });
    await expect(first).resolves.toBe('a');
    await expect(second).rejects.toBe(reason);
    await expect.poll(() => downs.length).toBe(1);
    expect(downs[0]).toMatchObject({ pid, signal: 'SIGKILL' });
    // The pool stays full and runs the next job.
    await expect(pool.apply('mark', [dir, 'c'])).resolves.toBe('c');
  });
});
