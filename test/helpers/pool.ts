/**
 * Shared helpers for the Pool's integration tests: pools built here log
 * nowhere and are all terminated by `terminatePools()` (call it in afterEach),
 * so no test leaves a child behind.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Pool, type PoolEvents, type PoolOptions } from 'prefork';

const silent = pino({ level: 'silent' });
const live = new Set<Pool>();

/** Absolute path of a file in test/fixtures. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

export type TestPoolOptions = Omit<PoolOptions, 'app'> & { app?: string };

/** A pool on test/fixtures/tasks-basic.mjs (or `app`), silent, registered for cleanup. */
export function makePool(options: TestPoolOptions = {}): Pool {
  const pool = new Pool({ logger: silent, ...options, app: options.app ?? fixture('tasks-basic.mjs') });
  live.add(pool);
  return pool;
}

export async function startPool(options: TestPoolOptions = {}): Promise<Pool> {
  const pool = makePool(options);
  await pool.start();
  return pool;
}

/** afterEach: kill every pool's children and wait until they have exited. */
export async function terminatePools(): Promise<void> {
  const pools = [...live];
  live.clear();
  await Promise.all(pools.map((pool) => pool.terminate()));
}

/** Resolves with the first event `name` whose payload passes `accept`. */
export function nextEvent<K extends keyof PoolEvents>(
  pool: Pool,
  name: K,
  accept: (...args: PoolEvents[K]) => boolean = () => true,
): Promise<PoolEvents[K]> {
  return new Promise((resolve) => {
    const listener = (...args: PoolEvents[K]): void => {
      if (!accept(...args)) return;
      pool.off(name, listener as never);
      resolve(args);
    };
    pool.on(name, listener as never);
  });
}

/** Records every payload of event `name` from now on. */
export function recordEvents<K extends keyof PoolEvents>(pool: Pool, name: K): PoolEvents[K][0][] {
  const seen: PoolEvents[K][0][] = [];
  pool.on(name, ((payload: PoolEvents[K][0]) => seen.push(payload)) as never);
  return seen;
}

/** The pids of the pool's children, in the pool's order. */
export function pids(pool: Pool): number[] {
  return pool.stats().processes.map((p) => p.pid);
}

/** Applies `name` and resolves with the pid of the child once it has started the job (its ACK arrived). */
export function applyAndAwaitStart(
  pool: Pool,
  name: string,
  args: unknown[] = [],
): { result: Promise<unknown>; started: Promise<number> } {
  let onStart!: (info: { pid: number }) => void;
  const started = new Promise<number>((resolve) => {
    onStart = (info) => resolve(info.pid);
  });
  const result = pool.apply(name, args, { onStart });
  // The test decides what to expect of `result`; this keeps an early rejection from being reported as unhandled.
  result.catch(() => undefined);
  return { result, started };
}

/** Lets a child blocked in the `block` task of tasks-basic.mjs return. */
export function release(pid: number): void {
  process.kill(pid, 'SIGUSR2');
}

/**
 * True when no process `pid` runs any more: kill(pid, 0) fails with ESRCH, or
 * it is a zombie (an orphan that exited, reparented to a pid 1 that does not reap).
 */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw err;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Asserts kill(pid, 0) fails with ESRCH: the child exited and was reaped by this process. */
export function expectReaped(pid: number): void {
  let code: string | undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    code = (err as NodeJS.ErrnoException).code;
  }
  if (code !== 'ESRCH') throw new Error(`process ${pid} still exists (kill(pid, 0) gave ${code ?? 'no error'})`);
}
