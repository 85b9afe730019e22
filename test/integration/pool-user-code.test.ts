/**
 * The user's callbacks (apply's onStart) and event listeners run while the
 * pool reads a child's frames or settles its exit. What they throw is logged;
 * it is never blamed on the child, and it never stops the pool's bookkeeping.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/wait.js';
import { PoolFailedError, WorkerLostError } from 'prefork';
import { captureLog } from '../helpers/worker.js';
import { fixture, makePool, pids, startPool, terminatePools } from '../helpers/pool.js';

afterEach(terminatePools);

function boom(): never {
  throw new Error('listener bug');
}

describe('user code that throws inside the pool', () => {
  it('an onStart callback: the job still runs to its result on the same child, and the error is logged', async () => {
    const { log, lines } = captureLog();
    const pool = await startPool({ processes: 1, logger: log });
    const [pid] = pids(pool);
    await expect(pool.apply('sleep', [50], { onStart: boom })).resolves.toBe(50);
    expect(pids(pool)).toEqual([pid]);
    expect(pool.stats().totals).toMatchObject({ done: 1, failed: 0, lost: 0, restarts: 0 });
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'an onStart callback threw; ignored',
        err: expect.objectContaining({ message: 'listener bug' }) as unknown,
      }),
    );
  });

  it("a 'process-up' listener that always throws: start() resolves, no child is killed, the pool serves", async () => {
    const { log, lines } = captureLog();
    const pool = makePool({ processes: 2, logger: log });
    let ups = 0;
    pool.on('process-up', () => {
      ups++;
      boom();
    });
    // A second listener still hears every event.
    const heard: number[] = [];
    pool.on('process-up', (e) => heard.push(e.pid));
    await pool.start();
    expect(ups).toBe(2);
    expect(heard.sort()).toEqual(pids(pool).sort());
    await expect(pool.apply('add', [2, 3])).resolves.toBe(5);
    expect(pool.stats().totals.restarts).toBe(0);
    expect(lines.filter((l) => l.msg === "a 'process-up' listener threw; ignored")).toHaveLength(2);
  });

  it("a 'job-lost' and a 'process-down' listener that throw: the lost job is still settled and its child replaced", async () => {
    const pool = await startPool({ processes: 1 });
    const [victim] = pids(pool);
    pool.on('job-lost', boom);
    pool.on('process-down', boom);
    const job = pool.apply('hang', [], { onStart: ({ pid }) => process.kill(pid, 'SIGKILL') });
    await expect(job).rejects.toBeInstanceOf(WorkerLostError);
    await waitUntil(() => pool.stats().processes.some((p) => p.pid !== victim && p.state === 'idle'), 'a replacement');
    await expect(pool.apply('pid')).resolves.not.toBe(victim);
  });
});

describe('a child that breaks the protocol before it is up', () => {
  it('counts toward maxRestarts: a module that writes to fd 1 as it loads fails the pool instead of fork-looping', async () => {
    const pool = makePool({ app: fixture('garbage-at-load.mjs'), processes: 1, maxRestarts: 2 });
    const err = await pool.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PoolFailedError);
    expect((err as Error).message).toMatch(/protocol error from child \d+/);
  });
});
