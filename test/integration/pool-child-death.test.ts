import { afterEach, describe, expect, it } from 'vitest';
import { SoftTimeLimitExceeded, TimeLimitExceeded, WorkerLostError } from 'prefork';
import {
  applyAndAwaitStart,
  fixture,
  nextEvent,
  pids,
  recordEvents,
  startPool,
  terminatePools,
} from '../helpers/pool.js';

afterEach(terminatePools);

async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the job to fail, but it succeeded');
}

describe('a child that dies under a job', () => {
  it('SIGKILLed mid-job: the job fails with WorkerLostError carrying the signal, and the child is replaced', async () => {
    const pool = await startPool({ processes: 2 });
    const before = pids(pool);
    const lost = recordEvents(pool, 'job-lost');
    const { result, started } = applyAndAwaitStart(pool, 'hang');
    await started;
    const running = pool.stats().processes.find((p) => p.current !== null);
    expect(running?.current?.name).toBe('hang');
    const victim = running!.pid;
    const replaced = nextEvent(pool, 'process-up');
    const down = nextEvent(pool, 'process-down', (e) => e.pid === victim);
    process.kill(victim, 'SIGKILL');

    const err = await rejectionOf(result);
    expect(err).toBeInstanceOf(WorkerLostError);
    expect(err).toMatchObject({ signal: 'SIGKILL', exitCode: null, pid: victim, code: 'PREFORK_WORKER_LOST' });
    expect(err.message).toContain('SIGKILL');
    const [{ pid: newPid }] = await replaced;
    expect(before).not.toContain(newPid);
    expect(await down).toEqual([{ pid: victim, exitCode: null, signal: 'SIGKILL', expected: false, reason: 'died' }]);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ name: 'hang', pid: victim });
    expect(lost[0]!.error).toBe(err);

    await expect
      .poll(() => pool.stats().processes.map((p) => p.state), { message: 'two idle children again' })
      .toEqual(['idle', 'idle']);
    expect(pids(pool)).not.toContain(victim);
    expect(pids(pool)).toContain(newPid);
    expect(pool.stats().totals).toMatchObject({ lost: 1, failed: 1, restarts: 1 });
    await expect(pool.apply('add', [1, 1])).resolves.toBe(2);
  });

  it('exiting mid-job: the job fails with WorkerLostError carrying the exit code', async () => {
    const pool = await startPool({ app: fixture('crash-on-run.mjs'), processes: 1 });
    const [victim] = pids(pool);
    const err = await rejectionOf(pool.apply('exit', [7]));
    expect(err).toBeInstanceOf(WorkerLostError);
    expect(err).toMatchObject({ exitCode: 7, signal: null, pid: victim });
    expect(err.message).toContain('exit code 7');
    const next = await pool.apply('pid');
    expect(next).not.toBe(victim);
  });

  it('a child already told to retire (maxTasksPerChild) that crashes on its last job is reported as an unexpected death', async () => {
    const pool = await startPool({ app: fixture('crash-on-run.mjs'), processes: 1, maxTasksPerChild: 1 });
    const [victim] = pids(pool);
    const down = nextEvent(pool, 'process-down', (e) => e.pid === victim);
    const err = await rejectionOf(pool.apply('exit', [7]));
    expect(err).toBeInstanceOf(WorkerLostError);
    expect(err).toMatchObject({ exitCode: 7 });
    expect((await down)[0]).toEqual({ pid: victim, exitCode: 7, signal: null, expected: false, reason: 'died' });
  });

  it('killing itself mid-job (SIGKILL from inside): WorkerLostError with the signal', async () => {
    const pool = await startPool({ app: fixture('crash-on-run.mjs'), processes: 1 });
    const err = await rejectionOf(pool.apply('killSelf'));
    expect(err).toBeInstanceOf(WorkerLostError);
    expect(err).toMatchObject({ signal: 'SIGKILL', exitCode: null });
  });

  it('with jobs written to its pipe but not started: those run on another child, none fails', async () => {
    // fcfs writes the jobs into the children's pipes, shared out; the first job kills its child.
    const pool = await startPool({ app: fixture('crash-on-run.mjs'), processes: 2, strategy: 'fcfs' });
    const down = nextEvent(pool, 'process-down');
    const crash = pool.apply('exit', [3]);
    crash.catch(() => undefined);
    const behind = Array.from({ length: 30 }, () => pool.apply('pid'));
    // After the TaskHandler's flush (a microtask), the 31 jobs sit in the pipes (16 behind the crash), none in the outbound buffer.
    await Promise.resolve();
    const afterFlush = pool.stats();
    expect(afterFlush.outbound).toBe(0);
    expect(afterFlush.processes.map((p) => p.held).sort()).toEqual([15, 16]);
    const [{ pid: victim }] = await down;

    const err = await rejectionOf(crash);
    expect(err).toBeInstanceOf(WorkerLostError);
    expect(err).toMatchObject({ exitCode: 3, pid: victim });
    const ranOn = (await Promise.all(behind)) as number[];
    expect(ranOn).toHaveLength(30);
    expect(ranOn).not.toContain(victim);
    expect(pool.stats().totals).toMatchObject({ applied: 31, done: 30, failed: 1, lost: 1 });
  });
});

describe('time limits', () => {
  it('hard timeLimit: the child is SIGKILLed, the job fails with TimeLimitExceeded and the child is replaced', async () => {
    const pool = await startPool({ processes: 1, timeLimit: 400 });
    const [victim] = pids(pool);
    const down = nextEvent(pool, 'process-down', (e) => e.pid === victim);
    const up = nextEvent(pool, 'process-up');
    const err = await rejectionOf(pool.apply('hang'));
    expect(err).toBeInstanceOf(TimeLimitExceeded);
    expect(err).toMatchObject({ limitMs: 400, code: 'PREFORK_TIME_LIMIT' });
    expect(err.message).toContain('hang');
    const [downEvent] = await down;
    expect(downEvent).toMatchObject({ pid: victim, signal: 'SIGKILL' });
    const [{ pid: newPid }] = await up;
    expect(newPid).not.toBe(victim);
    await expect(pool.apply('pid')).resolves.toBe(newPid);
  });

  it('a per-job timeLimit applies to that job only', async () => {
    const pool = await startPool({ processes: 1 });
    await expect(pool.apply('hang', [], { timeLimit: 200 })).rejects.toBeInstanceOf(TimeLimitExceeded);
    await expect(pool.apply('sleep', [50])).resolves.toBe(50);
  });

  it("softTimeLimit: the job's signal aborts and a task that then throws fails with SoftTimeLimitExceeded; the child lives on", async () => {
    const pool = await startPool({ processes: 1, softTimeLimit: 200 });
    const [pid] = pids(pool);
    const err = await rejectionOf(pool.apply('awaitAbort'));
    expect(err).toBeInstanceOf(SoftTimeLimitExceeded);
    expect(err.message).toContain('awaitAbort');
    expect(err.message).toContain('SoftTimeLimitExceeded');
    await expect(pool.apply('pid')).resolves.toBe(pid);
  });

  it('hard timeLimit with jobs queued behind in the same pipe (fcfs): only the timed-out job fails, the rest run on the replacement', async () => {
    const pool = await startPool({ processes: 1, strategy: 'fcfs', timeLimit: 300 });
    const [victim] = pids(pool);
    const stuck = pool.apply('hang');
    stuck.catch(() => undefined);
    const behind = Array.from({ length: 10 }, () => pool.apply('pid'));
    await expect(stuck).rejects.toBeInstanceOf(TimeLimitExceeded);
    const ranOn = (await Promise.all(behind)) as number[];
    expect(ranOn.every((pid) => pid !== victim)).toBe(true);
    expect(pool.stats().totals).toMatchObject({ done: 10, failed: 1 });
  });

  it('a task that ignores its signal and finishes after the soft time limit succeeds', async () => {
    const pool = await startPool({ processes: 1, softTimeLimit: 50 });
    await expect(pool.apply('sleep', [300])).resolves.toBe(300);
  });
});

describe('a child that dies while idle', () => {
  it('is replaced, and the pool keeps its size and serves jobs', async () => {
    const pool = await startPool({ processes: 2 });
    const [victim, other] = pids(pool);
    const down = nextEvent(pool, 'process-down', (e) => e.pid === victim);
    const up = nextEvent(pool, 'process-up');
    process.kill(victim!, 'SIGKILL');
    expect((await down)[0]).toEqual({
      pid: victim,
      exitCode: null,
      signal: 'SIGKILL',
      expected: false,
      reason: 'died',
    });
    const [{ pid: replacement }] = await up;
    expect(pids(pool).sort()).toEqual([other!, replacement].sort());
    expect(pool.stats().totals).toMatchObject({ restarts: 1, lost: 0, failed: 0 });
    await expect(Promise.all([pool.apply('add', [1, 2]), pool.apply('add', [3, 4])])).resolves.toEqual([3, 7]);
  });
});
