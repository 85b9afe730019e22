import { pack } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ArgumentSerializationError,
  ErrorSerializationError,
  PayloadDecodeError,
  ResultSerializationError,
  Retry,
  SoftTimeLimitExceeded,
  UnknownTaskError,
} from 'prefork';
import { pids, startPool, terminatePools } from '../helpers/pool.js';

afterEach(terminatePools);

async function rejectionOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error('expected the job to fail, but it succeeded');
}

describe('task failures', () => {
  it("keeps a thrown error's name, message, stack, own properties and cause chain", async () => {
    const pool = await startPool({ processes: 1 });
    const err = await rejectionOf(pool.apply('fail', ['email is too short']));
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('ValidationError');
    expect(err.message).toBe('email is too short');
    expect(err.stack).toContain('tasks-basic.mjs');
    expect(err.stack).toContain('email is too short');
    expect(err.code).toBe('E_INVALID');
    expect(err.field).toBe('email');
    expect(err.details).toEqual({ min: 3, tags: ['a', 'b'] });
    const inner = err.cause as Error & { depth: number; cause: Error & { depth: number } };
    expect(inner).toBeInstanceOf(Error);
    expect(inner).toMatchObject({ name: 'TypeError', message: 'inner cause', depth: 1 });
    expect(inner.cause).toBeInstanceOf(Error);
    expect(inner.cause).toMatchObject({ name: 'RangeError', message: 'root cause', depth: 2 });
    expect(pool.stats().totals).toMatchObject({ failed: 1, lost: 0 });
  });

  it('fails an unknown task name with UnknownTaskError naming it, and the child lives on', async () => {
    const pool = await startPool({ processes: 1 });
    const [pid] = pids(pool);
    const err = await rejectionOf(pool.apply('no-such-task', [1]));
    expect(err).toBeInstanceOf(UnknownTaskError);
    expect((err as unknown as UnknownTaskError).task).toBe('no-such-task');
    expect(err.message).toContain('no-such-task');
    await expect(pool.apply('pid')).resolves.toBe(pid);
  });

  it('fails a result that cannot be serialized with ResultSerializationError naming the task; the same child runs the next job', async () => {
    const pool = await startPool({ processes: 1 });
    const [pid] = pids(pool);
    const err = await rejectionOf(pool.apply('returnsFunction'));
    expect(err).toBeInstanceOf(ResultSerializationError);
    expect(err.message).toContain('returnsFunction');
    await expect(pool.apply('pid')).resolves.toBe(pid);
    expect(pool.stats().totals).toMatchObject({ restarts: 0, lost: 0 });
  });

  it('fails a result the parent cannot decode with ResultSerializationError naming the task; the same child runs the next job', async () => {
    const pool = await startPool({ processes: 1 });
    const [pid] = pids(pool);
    const err = await rejectionOf(pool.apply('returnsObjectKeyedMap'));
    expect(err).toBeInstanceOf(ResultSerializationError);
    expect(err.message).toMatch(
      /result of task returnsObjectKeyedMap .* does not decode in the parent: .*non-string keys/,
    );
    await expect(pool.apply('pid')).resolves.toBe(pid);
    expect(pool.stats().totals).toMatchObject({ restarts: 0, lost: 0 });
  });

  it('a progress value the parent cannot decode is reported as such; the job and its child go on', async () => {
    const pool = await startPool({ processes: 1 });
    const [pid] = pids(pool);
    const seen: unknown[] = [];
    await expect(pool.apply('progressObjectKeyedMap', [], { onProgress: (value) => seen.push(value) })).resolves.toBe(
      'done',
    );
    expect(seen).toEqual([
      expect.stringMatching(/^\(the progress value does not decode in the parent: .*non-string keys/),
    ]);
    await expect(pool.apply('pid')).resolves.toBe(pid);
    expect(pool.stats().totals).toMatchObject({ restarts: 0, lost: 0 });
  });

  it('fails undecodable argument bytes with PayloadDecodeError; the same child runs the next job', async () => {
    const pool = await startPool({ processes: 1 });
    const [pid] = pids(pool);
    const err = await rejectionOf(pool.apply('add', new Uint8Array([0x92, 0x01])));
    expect(err).toBeInstanceOf(PayloadDecodeError);
    expect(err.message).toContain('add');
    await expect(pool.apply('pid')).resolves.toBe(pid);
  });

  it('fails argument bytes that decode to something other than an array with PayloadDecodeError', async () => {
    const pool = await startPool({ processes: 1 });
    const err = await rejectionOf(pool.apply('add', pack({ a: 1 })));
    expect(err).toBeInstanceOf(PayloadDecodeError);
  });

  it.each([
    ['nameGetter', 'reading its name threw: name getter boom'],
    ['proxy', 'reading its prototype threw: getPrototypeOf trap boom'],
    ['toStringBomb', 'reading its string form threw: toString boom'],
  ])(
    'a thrown value that cannot be read (%s) fails its job with ErrorSerializationError saying why; the same child runs the next job',
    async (kind, why) => {
      const pool = await startPool({ processes: 1 });
      const [pid] = pids(pool);
      const err = await rejectionOf(pool.apply('throwsUnreadable', [kind]));
      expect(err).toBeInstanceOf(ErrorSerializationError);
      expect(err.message).toBe(`the value task throwsUnreadable threw cannot be read: ${why}`);
      expect(err.task).toBe('throwsUnreadable');
      await expect(pool.apply('pid')).resolves.toBe(pid);
      expect(pool.stats().totals).toMatchObject({ failed: 1, lost: 0, restarts: 0 });
    },
  );

  it('a rejection after the soft time limit whose string form cannot be read fails with SoftTimeLimitExceeded saying so; the child lives on', async () => {
    const pool = await startPool({ processes: 1 });
    const [pid] = pids(pool);
    const err = await rejectionOf(pool.apply('rejectsUnreadableOnAbort', ['toStringBomb'], { softTimeLimit: 50 }));
    expect(err).toBeInstanceOf(SoftTimeLimitExceeded);
    expect(err.message).toBe(
      'task rejectsUnreadableOnAbort exceeded its soft time limit and then threw: (object that cannot be read: toString boom)',
    );
    await expect(pool.apply('pid')).resolves.toBe(pid);
    expect(pool.stats().totals).toMatchObject({ lost: 0, restarts: 0 });
  });

  it('a Retry thrown after the soft time limit stays a Retry, with its delay: the task asked for another attempt', async () => {
    const pool = await startPool({ processes: 1 });
    const err = await rejectionOf(pool.apply('retryOnAbort', [7_000], { softTimeLimit: 50 }));
    expect(err).toBeInstanceOf(Retry);
    expect(err).toMatchObject({ delay: 7_000, message: 'out of time' });
  });

  it('a result whose every read throws (a Proxy) fails with ResultSerializationError; the same child runs the next job', async () => {
    const pool = await startPool({ processes: 1 });
    const [pid] = pids(pool);
    const err = await rejectionOf(pool.apply('returnsTrap'));
    expect(err).toBeInstanceOf(ResultSerializationError);
    expect(err.message).toContain('get trap boom');
    await expect(pool.apply('pid')).resolves.toBe(pid);
    expect(pool.stats().totals).toMatchObject({ lost: 0, restarts: 0 });
  });

  it('fails arguments the parent cannot encode with ArgumentSerializationError; nothing reaches a child', async () => {
    const pool = await startPool({ processes: 1 });
    const [pid] = pids(pool);
    const err = await rejectionOf(pool.apply('echo', [() => 1]));
    expect(err).toBeInstanceOf(ArgumentSerializationError);
    expect(err.message).toContain('echo');
    await expect(pool.apply('pid')).resolves.toBe(pid);
    expect(pool.stats().processes[0]!.jobsDone).toBe(1);
  });
});

describe('frames over maxFrameSize', () => {
  it('a job whose arguments exceed maxFrameSize fails alone with ArgumentSerializationError; no child dies and the pool carries on', async () => {
    const pool = await startPool({ processes: 2, maxFrameSize: '1MB', maxRestarts: 3 });
    const before = pids(pool);
    const err = await rejectionOf(pool.apply('length', ['y'.repeat(2_000_000)]));
    expect(err).toBeInstanceOf(ArgumentSerializationError);
    expect(err.message).toContain('length');
    await expect(pool.apply('echo', ['still working'])).resolves.toBe('still working');
    expect(pids(pool).sort()).toEqual(before.sort());
    expect(pool.stats().totals).toMatchObject({ lost: 0, restarts: 0 });
  });

  it('a result that exceeds maxFrameSize fails with ResultSerializationError naming the task; the child lives on', async () => {
    const pool = await startPool({ processes: 1, maxFrameSize: '1MB' });
    const [pid] = pids(pool);
    const err = await rejectionOf(pool.apply('repeat', ['x', 2_000_000]));
    expect(err).toBeInstanceOf(ResultSerializationError);
    expect(err.message).toContain('repeat');
    await expect(pool.apply('pid')).resolves.toBe(pid);
    expect(pool.stats().totals).toMatchObject({ lost: 0, restarts: 0 });
  });

  it("an error too large for a frame still fails its job with the error's name and message; the child lives on", async () => {
    const pool = await startPool({ processes: 1, maxFrameSize: '1MB' });
    const [pid] = pids(pool);
    const err = await rejectionOf(pool.apply('failHuge', [2_000_000]));
    expect(err.name).toBe('Error');
    expect(err.message).toContain('huge error');
    await expect(pool.apply('pid')).resolves.toBe(pid);
    expect(pool.stats().totals).toMatchObject({ lost: 0, restarts: 0 });
  });
});
