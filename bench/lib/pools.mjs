// One adapter per pool, so a pool scenario runs the same loop and the same
// clock over prefork, piscina (bench/peers/piscina.mjs) and workerpool
// (bench/peers/workerpool.mjs):
// openPool(impl, { processes, strategy }) → { call(name, x) → Promise, close(), tally(), pids() }.
// pids() (the children, for their CPU time) is empty for the peers.
// tally() (prefork only, after close()) sums what each child counted itself:
// { count, sum, children } — a job run twice shows up there even when its
// promise settled once.
import { fileURLToPath } from 'node:url';
import { readTally, tallyDir } from './tally.mjs';

const preforkTasks = fileURLToPath(new URL('../fixtures/prefork-tasks.mjs', import.meta.url));

async function openPrefork({ processes, strategy }) {
  const { Pool } = await import('prefork');
  const { pino } = await import('pino');
  const dir = tallyDir();
  const pool = new Pool({
    app: preforkTasks,
    processes,
    strategy,
    env: { BENCH_TALLY_DIR: dir },
    logger: pino({ level: 'warn' }),
  });
  await pool.start();
  return {
    call: (name, x) => pool.apply(name, [x]),
    close: () => pool.close(),
    tally: () => readTally(dir),
    pids: () => pool.stats().processes.map((x) => x.pid),
  };
}

export async function openPool(impl, { processes = 2, strategy = 'fair' } = {}) {
  if (impl === 'prefork') return openPrefork({ processes, strategy });
  if (impl === 'piscina') return (await import('../peers/piscina.mjs')).open({ processes });
  if (impl === 'workerpool') return (await import('../peers/workerpool.mjs')).open({ processes });
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
