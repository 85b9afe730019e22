/**
 * Tasks that harm their own child beside their work: a death after the job
 * returned, a task that closes the child's end of a pipe. The pool replaces
 * such a child and serves on; it never hangs on a job, and never takes a
 * child that did work for a module that cannot load.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerLostError } from 'prefork';
import { fixture, makePool, nextEvent, recordEvents, terminatePools } from '../helpers/pool.js';

afterEach(terminatePools);

const app = fixture('task-misdeeds.mjs');

describe('a child that dies idle after it did work', () => {
  it('does not count toward maxRestarts: each job succeeds, each child is replaced, the pool never fails', async () => {
    const pool = makePool({ app, processes: 1, maxRestarts: 1, restartWindow: '10m' });
    const failed = recordEvents(pool, 'failed');
    await pool.start();
    for (let round = 0; round < 3; round++) {
      const down = nextEvent(pool, 'process-down');
      const pid = await pool.apply('dieAfterReturn');
      const [event] = await down;
      expect(event).toMatchObject({ pid, expected: false, exitCode: 1 });
    }
    expect(failed).toEqual([]);
    await expect(pool.apply('pid')).resolves.toEqual(expect.any(Number));
    expect(pool.stats().totals).toMatchObject({ done: 4, failed: 0, lost: 0, restarts: 3 });
  });
});

describe("a task that closes its child's end of a pipe, and the child lives on", () => {
  it('fd 1 (outq) reopened on a file: the job fails as lost to a protocol error, the child is replaced, the pool serves', async () => {
    const pool = makePool({ app, processes: 1 });
    await pool.start();
    const down = nextEvent(pool, 'process-down');
    const err = await pool.apply('redirectStdout').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkerLostError);
    expect((err as Error).message).toMatch(/protocol error: .*closed its outq/);
    const [event] = await down;
    expect(event).toMatchObject({ reason: 'protocol-error', signal: 'SIGKILL' });
    await expect(pool.apply('pid')).resolves.not.toBe(event.pid);
    await pool.close();
  });

  it('fd 0 (inq): the job written to it next runs on another child, unharmed; close() ends', async () => {
    const pool = makePool({ app, processes: 1 });
    await pool.start();
    const closer = await pool.apply('closeStdin');
    const down = nextEvent(pool, 'process-down');
    // Written to a child that can no longer read it: it never started, so it runs elsewhere.
    const next = await pool.apply('pid');
    expect(next).not.toBe(closer);
    const [event] = await down;
    expect(event).toMatchObject({ pid: closer, reason: 'protocol-error' });
    expect(pool.stats().totals).toMatchObject({ done: 2, failed: 0, lost: 0 });
    await pool.close();
  });
});
