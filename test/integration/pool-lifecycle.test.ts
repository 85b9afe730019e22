import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PoolClosedError } from 'prefork';
import {
  applyAndAwaitStart,
  expectReaped,
  fixture,
  isGone,
  makePool,
  pids,
  release,
  startPool,
  terminatePools,
} from '../helpers/pool.js';

afterEach(terminatePools);

describe('close()', () => {
  it('waits for the jobs in flight and buffered, then every child exits', async () => {
    const pool = await startPool({ processes: 2 });
    const children = pids(pool);
    const a = applyAndAwaitStart(pool, 'block');
    const b = applyAndAwaitStart(pool, 'block');
    const queued = pool.apply('echo', ['after the blocked ones']);
    const busy = await Promise.all([a.started, b.started]);
    const order: string[] = [];
    for (const [label, p] of [
      ['a', a.result],
      ['b', b.result],
      ['queued', queued],
    ] as const)
      void p.then(() => order.push(label));

    const closing = pool.close().then(() => order.push('closed'));
    await expect(pool.apply('echo', [1])).rejects.toBeInstanceOf(PoolClosedError);
    for (const pid of busy) release(pid);
    await closing;

    expect(order.at(-1)).toBe('closed');
    expect(order.sort()).toEqual(['a', 'b', 'closed', 'queued']);
    await expect(Promise.all([a.result, b.result, queued])).resolves.toEqual([
      busy[0],
      busy[1],
      'after the blocked ones',
    ]);
    for (const pid of children) expectReaped(pid);
    expect(pool.stats().processes).toEqual([]);
  });

  it('lets the children exit on their own (SHUTDOWN), not by a signal', async () => {
    const pool = await startPool({ processes: 2 });
    const downs: { exitCode: number | null; signal: string | null; expected: boolean }[] = [];
    pool.on('process-down', (e) => downs.push(e));
    await pool.close();
    expect(downs).toHaveLength(2);
    expect(downs.every((d) => d.exitCode === 0 && d.signal === null && d.expected)).toBe(true);
  });

  it('can be called twice at once and again afterwards', async () => {
    const pool = await startPool({ processes: 2 });
    const children = pids(pool);
    const job = pool.apply('sleep', [50]);
    await Promise.all([pool.close(), pool.close()]);
    await expect(job).resolves.toBe(50);
    await pool.close();
    for (const pid of children) expectReaped(pid);
  });

  it('rejects apply() after close() with PoolClosedError', async () => {
    const pool = await startPool({ processes: 1 });
    await pool.close();
    await expect(pool.apply('echo', [1])).rejects.toBeInstanceOf(PoolClosedError);
  });

  it('on a pool never started, rejects the jobs it buffered with PoolClosedError', async () => {
    const pool = makePool({ processes: 1 });
    const early = pool.apply('echo', [1]);
    await pool.close();
    await expect(early).rejects.toBeInstanceOf(PoolClosedError);
    await expect(pool.start()).rejects.toBeInstanceOf(PoolClosedError);
  });
});

describe('terminate()', () => {
  it('kills the children and rejects running and buffered jobs with PoolClosedError; no child is left', async () => {
    const pool = await startPool({ processes: 2 });
    const children = pids(pool);
    const running = [applyAndAwaitStart(pool, 'hang'), applyAndAwaitStart(pool, 'hang')];
    await Promise.all(running.map((r) => r.started));
    const buffered = [pool.apply('echo', [1]), pool.apply('echo', [2]), pool.apply('echo', [3])];
    for (const p of buffered) p.catch(() => undefined);

    await pool.terminate();

    for (const job of [...running.map((r) => r.result), ...buffered])
      await expect(job).rejects.toBeInstanceOf(PoolClosedError);
    for (const pid of children) expectReaped(pid);
    expect(pool.stats().processes).toEqual([]);
    expect(pool.stats().totals.lost).toBe(0);
    await expect(pool.apply('echo', [1])).rejects.toBeInstanceOf(PoolClosedError);
  });

  it('kills a child stuck in a CPU loop', async () => {
    const pool = await startPool({ processes: 1, killTimeout: 200 });
    const [pid] = pids(pool);
    const job = applyAndAwaitStart(pool, 'spin', [60_000]);
    await job.started;
    await pool.terminate();
    await expect(job.result).rejects.toBeInstanceOf(PoolClosedError);
    expectReaped(pid!);
  });
});

describe('signals sent to the whole process group (Ctrl-C, `timeout`, `kill -TERM -<pgid>`, systemd)', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGQUIT'] as const)(
    '%s reaching a child mid-job: the job finishes and the child lives on (the parent decides when it stops)',
    async (signal) => {
      const pool = await startPool({ processes: 1 });
      const job = applyAndAwaitStart(pool, 'block');
      const pid = await job.started;
      // Pending in the child before the release is even sent: a child that dies of it never returns.
      process.kill(pid, signal);
      release(pid);
      await expect(job.result).resolves.toBe(pid);
      await expect(pool.apply('pid')).resolves.toBe(pid);
      expect(pool.stats().totals).toMatchObject({ lost: 0, restarts: 0 });
    },
  );
});

describe('terminate() on children that ignore SIGTERM', () => {
  it('kills them with SIGKILL; the running job is rejected with PoolClosedError and no child is left', async () => {
    const pool = await startPool({ app: fixture('ignores-sigterm.mjs'), processes: 2, killTimeout: 300 });
    const children = pids(pool);
    const downs: { signal: string | null }[] = [];
    pool.on('process-down', (e) => downs.push(e));
    const job = applyAndAwaitStart(pool, 'hang');
    await job.started;
    await pool.terminate();
    await expect(job.result).rejects.toBeInstanceOf(PoolClosedError);
    for (const pid of children) expectReaped(pid);
    expect(downs.map((d) => d.signal)).toEqual(['SIGKILL', 'SIGKILL']);
  });

  it('close() still lets them exit by themselves', async () => {
    const pool = await startPool({ app: fixture('ignores-sigterm.mjs'), processes: 2, killTimeout: 60_000 });
    const children = pids(pool);
    await pool.close();
    for (const pid of children) expectReaped(pid);
  });
});

describe('terminate() before start() has finished', () => {
  it('makes start() reject with PoolClosedError and leaves no child', async () => {
    const pool = makePool({ processes: 2 });
    const starting = pool.start();
    starting.catch(() => undefined);
    const children = pids(pool);
    expect(children).toHaveLength(2);
    await pool.terminate();
    await expect(starting).rejects.toBeInstanceOf(PoolClosedError);
    for (const pid of children) expectReaped(pid);
  });
});

/** Runs test/fixtures/orphan-parent.mjs; resolves once it printed its children's pids. */
async function startOrphanParent(
  mode: 'hang' | 'spin' | 'spin-limit',
): Promise<{ parent: ReturnType<typeof spawn>; children: number[] }> {
  const parent = spawn(process.execPath, [fixture('orphan-parent.mjs'), mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  parents.push(parent);
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: parent.stdout });
    rl.once('line', resolve);
    parent.once('exit', (code, signal) => reject(new Error(`orphan-parent exited early: ${code ?? signal}`)));
  });
  const children = JSON.parse(line) as number[];
  expect(children).toHaveLength(2);
  for (const pid of children) expect(isGone(pid)).toBe(false);
  return { parent, children };
}

const parents: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const parent of parents.splice(0)) parent.kill('SIGKILL');
});

describe('no orphans', () => {
  it('children exit by themselves when their parent is SIGKILLed, busy or idle', async () => {
    const { parent, children } = await startOrphanParent('hang');
    const exited = new Promise((resolve) => parent.once('exit', resolve));
    parent.kill('SIGKILL');
    await exited;
    await vi.waitFor(
      () => expect(children.every(isGone), `children ${children.join(', ')} of the killed parent to exit`).toBe(true),
      { timeout: 30_000, interval: 20 },
    );
  });

  it('a child in a CPU busy loop (it never reads the EOF) exits too when its parent is SIGKILLed: its watchdog sees to it', async () => {
    const { parent, children } = await startOrphanParent('spin');
    const exited = new Promise((resolve) => parent.once('exit', resolve));
    parent.kill('SIGKILL');
    await exited;
    await vi.waitFor(() => expect(children.filter((pid) => !isGone(pid))).toEqual([]), {
      timeout: 30_000,
      interval: 50,
    });
  });

  it('a child in a CPU busy loop past its hard time limit dies even when its parent cannot kill it (stopped)', async () => {
    const { parent, children } = await startOrphanParent('spin-limit');
    parent.kill('SIGSTOP');
    try {
      // The parent is alive (the child's parent pid has not changed) but enforces nothing: the child's watchdog does.
      await vi.waitFor(() => expect(children.some(isGone)).toBe(true), { timeout: 30_000, interval: 50 });
    } finally {
      parent.kill('SIGCONT');
    }
  });
});
