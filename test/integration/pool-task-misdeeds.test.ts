/**
 * Tasks that harm their own child beside their work: a death after the job
 * returned. The pool replaces such a child and serves on, and never takes a
 * child that did work for a module that cannot load.
 */
import { afterEach, describe, expect, it } from 'vitest';
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
