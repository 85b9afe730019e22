// One small adapter per pool, so the pool scenarios run the same loop over
// prefork, piscina (worker threads) and workerpool (child processes):
// openPool(impl, { processes, strategy }) → { call(name, x) → Promise, close(), pids() }.
import { fileURLToPath } from 'node:url';

const fixture = (f) => fileURLToPath(new URL(`../fixtures/${f}`, import.meta.url));

export async function openPool(impl, { processes = 2, strategy = 'fair', env = {} } = {}) {
  if (impl === 'prefork') {
    const { Pool } = await import('prefork');
    const { pino } = await import('pino');
    const pool = new Pool({ app: fixture('prefork-tasks.mjs'), processes, strategy, env, logger: pino({ level: 'warn' }) });
    await pool.start();
    return {
      call: (name, x) => pool.apply(name, [x]),
      close: () => pool.close(),
      pids: () => pool.stats().processes.map((p) => p.pid),
    };
  }
  if (impl === 'piscina') {
    const { Piscina } = await import('piscina');
    const pool = new Piscina({ filename: fixture('piscina-worker.mjs'), minThreads: processes, maxThreads: processes });
    return {
      call: (name, x) => pool.run(x, { name }),
      close: () => pool.destroy(),
      pids: () => [],
    };
  }
  if (impl === 'workerpool') {
    const workerpool = (await import('workerpool')).default;
    const pool = workerpool.pool(fixture('workerpool-worker.mjs'), { workerType: 'process', minWorkers: processes, maxWorkers: processes });
    return {
      call: (name, x) => pool.exec(name, [x]),
      close: () => pool.terminate(),
      pids: () => [],
    };
  }
  throw new Error(`unknown pool implementation: ${impl}`);
}

/** Submits `n` jobs at once and resolves with { ms, count, sum } when all are settled. */
export function burst(pool, name, n, argOf = (i) => i) {
  return new Promise((resolve, reject) => {
    let count = 0;
    let sum = 0;
    const t0 = performance.now();
    const done = (v) => {
      sum += v;
      if (++count === n) resolve({ ms: performance.now() - t0, count, sum });
    };
    for (let i = 0; i < n; i++) pool.call(name, argOf(i)).then(done, reject);
  });
}
