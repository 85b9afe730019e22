import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PoolFailedError } from 'prefork';
import { fixture, makePool, pids, recordEvents, terminatePools } from '../helpers/pool.js';
import { captureLog } from '../helpers/worker.js';

afterEach(terminatePools);

async function startFailure(pool: ReturnType<typeof makePool>): Promise<PoolFailedError> {
  try {
    await pool.start();
  } catch (err) {
    expect(err).toBeInstanceOf(PoolFailedError);
    return err as PoolFailedError;
  }
  throw new Error('expected start() to reject, but it resolved');
}

describe('a pool whose children cannot become ready', () => {
  it('never-ready: each child is killed after procAliveTimeout, and start() fails with PoolFailedError', async () => {
    const pool = makePool({
      app: fixture('never-ready.mjs'),
      processes: 1,
      procAliveTimeout: 300,
      maxRestarts: 2,
      restartWindow: 60_000,
    });
    const downs = recordEvents(pool, 'process-down');
    const err = await startFailure(pool);
    expect(err.code).toBe('PREFORK_POOL_FAILED');
    expect(err.message).toContain('WORKER_UP');
    expect(err.message).toContain('procAliveTimeout');
    expect(downs.length).toBeGreaterThanOrEqual(2);
    for (const down of downs.slice(0, 2)) expect(down).toMatchObject({ signal: 'SIGKILL', expected: false });
    await expect(pool.apply('echo', [1])).rejects.toBeInstanceOf(PoolFailedError);
    await expect.poll(() => pids(pool).length, { message: 'the last child to be gone' }).toBe(0);
  });

  it('never-ready, however slowly: more than maxRestarts children in a row killed for hanging fail the pool', async () => {
    // Each child lives procAliveTimeout: restartWindow never holds more than two deaths, only the count in a row can fail it.
    const pool = makePool({
      app: fixture('never-ready.mjs'),
      processes: 1,
      procAliveTimeout: 300,
      maxRestarts: 2,
      restartWindow: 500,
    });
    const downs = recordEvents(pool, 'process-down');
    const failures = recordEvents(pool, 'failed');
    const started = pool.start().then(
      () => undefined,
      (err: unknown) => err,
    );
    await expect.poll(() => downs.length, { message: 'three children killed for hanging' }).toBeGreaterThanOrEqual(3);
    expect(failures).toHaveLength(1);
    const err = await started;
    expect(err).toBeInstanceOf(PoolFailedError);
    expect((err as PoolFailedError).message).toContain('procAliveTimeout');
    expect((err as PoolFailedError).message).toContain('3 times in a row');
    await expect.poll(() => pids(pool).length, { message: 'no child left' }).toBe(0);
    expect(downs).toHaveLength(3);
  });

  it("a WORKER_UP that comes after procAliveTimeout killed the child is no protocol error: the kill's reason stands", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefork-late-up-'));
    const marker = join(dir, 'loaded');
    const { log, lines } = captureLog();
    try {
      const pool = makePool({
        app: fixture('loaded-marker.mjs'),
        processes: 1,
        procAliveTimeout: 2_000,
        maxRestarts: 3,
        restartWindow: 60_000,
        env: { PREFORK_TEST_MARKER: marker },
        logger: log,
      });
      const downs = recordEvents(pool, 'process-down');
      // From the check phase, whatever test ran before: the loop's next turn starts with its timers.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const started = pool.start();
      // Hold the event loop until the child has sent WORKER_UP and procAliveTimeout has passed: when it
      // turns again, timers run before I/O, so the kill comes first and the WORKER_UP is read after it.
      const from = Date.now();
      while (!existsSync(marker) || Date.now() - from < 2_500) {
        /* busy: nothing else may run */
      }
      // The replacement boots as any child does (a loaded machine may make it late too: the pool may fail, saying why).
      const failure = await started.then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      await expect.poll(() => downs.length).toBeGreaterThanOrEqual(1);
      expect(downs[0]).toMatchObject({ signal: 'SIGKILL', expected: false });
      const messages = lines.map((l) => String(l.msg));
      expect(messages).toContain('child sent no WORKER_UP in time; killing it');
      expect(messages.filter((m) => m.includes('protocol error'))).toEqual([]);
      if (failure !== undefined) expect(failure.message).toContain('procAliveTimeout');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('throws-on-import: start() fails with PoolFailedError naming the module and the import error, without fork-looping', async () => {
    const app = fixture('throws-on-import.mjs');
    const pool = makePool({ app, processes: 2, maxRestarts: 3, restartWindow: 60_000 });
    const downs = recordEvents(pool, 'process-down');
    const err = await startFailure(pool);
    expect(err.message).toContain(app);
    expect(err.message).toContain('fixture refuses to load: DATABASE_URL is not set');
    await expect.poll(() => pids(pool).length, { message: 'every child to be gone' }).toBe(0);
    // maxRestarts + 1 deaths fail the pool; at most the children already starting then die too.
    expect(downs.length).toBeGreaterThanOrEqual(4);
    expect(downs.length).toBeLessThanOrEqual(4 + 2);
  });

  it('not-a-registry: start() fails with PoolFailedError saying the default export is not defineTasks', async () => {
    const app = fixture('not-a-registry.mjs');
    const pool = makePool({ app, processes: 1, maxRestarts: 1, restartWindow: 60_000 });
    const err = await startFailure(pool);
    expect(err.message).toContain(app);
    expect(err.message).toContain('defineTasks');
  });

  it('a maxFrameSize too small for the list of tasks: start() fails with PoolFailedError naming the option', async () => {
    // tasks-basic.mjs announces its tasks in about 250 bytes.
    const pool = makePool({ processes: 1, maxFrameSize: 200, maxRestarts: 1, restartWindow: 60_000 });
    const err = await startFailure(pool);
    expect(err.message).toMatch(/invalid option maxFrameSize: 200 .*list of tasks/);
  });

  it('emits failed with the same error when someone listens', async () => {
    const pool = makePool({
      app: fixture('throws-on-import.mjs'),
      processes: 1,
      maxRestarts: 1,
      restartWindow: 60_000,
    });
    const failed = recordEvents(pool, 'failed');
    const err = await startFailure(pool);
    expect(failed).toEqual([err]);
  });

  it('a missing task module fails start() with PoolFailedError naming the path', async () => {
    const app = fixture('does-not-exist.mjs');
    const pool = makePool({ app, processes: 1, maxRestarts: 1, restartWindow: 60_000 });
    const err = await startFailure(pool);
    expect(err.message).toContain('does-not-exist.mjs');
  });
});

describe('a pool whose children cannot even be spawned', () => {
  it('a missing node binary (ENOENT): start() fails with PoolFailedError naming it, without crashing or fork-looping', async () => {
    const pool = makePool({ processes: 2, execPath: '/nonexistent/bin/node', maxRestarts: 3, restartWindow: 60_000 });
    const downs = recordEvents(pool, 'process-down');
    const err = await startFailure(pool);
    expect(err.message).toContain('/nonexistent/bin/node');
    expect(err.message).toContain('ENOENT');
    await expect(pool.apply('echo', [1])).rejects.toBe(err);
    expect(pids(pool)).toEqual([]);
    // Nothing was ever up, so nothing went down.
    expect(downs).toEqual([]);
    await pool.close();
  });

  it('spawn() throwing at once (an argument it refuses): start() still returns a promise, which rejects', async () => {
    const pool = makePool({ processes: 1, execArgv: ['--no-such\u0000flag'], maxRestarts: 1, restartWindow: 60_000 });
    let started: Promise<void> | undefined;
    expect(() => {
      started = pool.start();
    }).not.toThrow();
    const err = await started!.then(
      () => new Error('expected start() to reject'),
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(PoolFailedError);
    expect(err.message).toContain('cannot start a child process');
    expect(pids(pool)).toEqual([]);
  });

  it('out of file descriptors (EMFILE) at start: the parent does not crash; start() rejects with PoolFailedError', () => {
    const outcome = runEmfile('start');
    expect(outcome.held).toBeGreaterThan(0);
    expect(outcome).toMatchObject({ started: false, error: { name: 'PoolFailedError' } });
    expect((outcome.error as { message: string }).message).toContain('EMFILE');
  });

  it('out of file descriptors (EMFILE) when a dead child must be replaced: the parent does not crash; the pool fails with PoolFailedError', () => {
    const outcome = runEmfile('replace');
    expect(outcome).toMatchObject({ before: 'served', failed: { name: 'PoolFailedError' }, after: 'PoolFailedError' });
    expect((outcome.failed as { message: string }).message).toContain('EMFILE');
  });

  it('a short EMFILE burst when a dead child must be replaced: spawning pauses between attempts, so the pool recovers instead of failing', () => {
    // The fds are freed right after the first spawn fails; at once, the next two attempts would have failed too (maxRestarts 2).
    const outcome = runEmfile('transient');
    expect(outcome).toMatchObject({ before: 'served', freed: true, after: 'again' });
    expect(outcome.failed).toBeUndefined();
  });

  it('a child whose spawn failed is never signalled: terminate() in the same tick as start() kills nothing else', () => {
    // Node's kill() on such a child signals an unset pid (garbage, or 0: the caller's whole group, once the whole test run).
    const r = spawnSync('setsid', ['-w', process.execPath, fixture('kill-unspawned.mjs'), fixture('tasks-basic.mjs')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.signal).toBeNull();
    expect(JSON.parse(r.stdout.trim())).toEqual({ start: 'PoolClosedError', killsWithoutPid: 0 });
  });

  it('a pool that fails while it pauses before spawning again leaves no timer behind: it stops its supervisor', () => {
    const outcome = runEmfile('fail-while-pausing');
    expect(outcome).toMatchObject({ error: { name: 'PoolFailedError' }, timers: 0 });
    expect((outcome.error as { message: string }).message).toContain('EMFILE');
  });
});

/** Runs test/fixtures/spawn-emfile.mjs in its own process and session under `ulimit -n 256`; returns what it printed. */
function runEmfile(mode: 'start' | 'replace' | 'transient' | 'fail-while-pausing'): Record<string, unknown> {
  const out = execFileSync(
    'sh',
    [
      '-c',
      'ulimit -n 256 && exec setsid -w "$0" "$1" "$2" "$3"',
      process.execPath,
      fixture('spawn-emfile.mjs'),
      fixture('tasks-basic.mjs'),
      mode,
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;
}
