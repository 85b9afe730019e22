import { afterEach, describe, expect, it } from 'vitest';
import { WorkerLostError } from 'prefork';
import { fixture, nextEvent, pids, startPool, terminatePools } from '../helpers/pool.js';

afterEach(terminatePools);

describe('a child that breaks the pipe protocol', () => {
  it.each([
    ['oversizedHeader', /exceeds the maximum/],
    ['undecodableBody', /protocol error/],
    ['unknownType', /unknown message type 99/],
    ['notATuple', /not a message tuple/],
    ['withdrawsItself', /gave back jobs \d+ that it does not hold unstarted/],
    ['withdrawsUnknown', /gave back jobs 987654 that it does not hold unstarted/],
    ['dropsUnknown', /dropped jobs 987654 that were not taken back/],
  ])(
    '%s: the child is replaced, its job fails with WorkerLostError naming the protocol error, the pool carries on',
    async (task, detail) => {
      const pool = await startPool({ app: fixture('garbage-frames.mjs'), processes: 1, maxFrameSize: '1MB' });
      const [victim] = pids(pool);
      const down = nextEvent(pool, 'process-down', (e) => e.pid === victim);
      let err: Error | undefined;
      try {
        await pool.apply(task);
      } catch (e) {
        err = e as Error;
      }
      expect(err).toBeInstanceOf(WorkerLostError);
      expect(err!.message).toContain('protocol error');
      expect(err!.message).toMatch(detail);
      const [downEvent] = await down;
      expect(downEvent).toMatchObject({ pid: victim, expected: false });
      const next = await pool.apply('pid');
      expect(next).not.toBe(victim);
      expect(pids(pool)).toEqual([next]);
      await expect(pool.apply('pid')).resolves.toBe(next);
    },
  );

  it('jobs queued behind the garbage in the same pipe (fcfs) run on the replacement, none fails', async () => {
    const pool = await startPool({ app: fixture('garbage-frames.mjs'), processes: 1, strategy: 'fcfs' });
    const [victim] = pids(pool);
    const bad = pool.apply('unknownType');
    bad.catch(() => undefined);
    const behind = Array.from({ length: 10 }, () => pool.apply('pid'));
    await expect(bad).rejects.toBeInstanceOf(WorkerLostError);
    const ranOn = (await Promise.all(behind)) as number[];
    expect(ranOn.every((pid) => pid !== victim)).toBe(true);
  });
});
