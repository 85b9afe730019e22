// A3 — CPU-bound jobs through a pool.
// Measures: wall time of `jobs` busy-loop jobs (the calibrated ~2 ms loop,
// `iterations` passed in by run.js, the same count for every peer), all
// submitted at once; efficiency = ideal / wall, with
// ideal = jobs × msPerJob / min(processes, CPUs) (computed by run.js).
// Knobs ($BENCH_PARAMS): impl, strategy, processes (2), jobs (4,000),
// iterations, warmup (2,000 no-op jobs, then 2 × processes busy-loop jobs).
// Clock: from just before the first submit to the last settled promise.
// Also reported: the parent's CPU time over that window (on 2 cores the
// parent competes with the children for CPU).
// Check: every job returned spin(iterations) (the checksum sum), and
// (prefork) the children's own counts say each job ran once.
import { params, report } from './lib/child.mjs';
import { burst, openPool } from './lib/pools.mjs';
import { spin } from './lib/spin.mjs';
import { tallyCheck } from './lib/tally.mjs';

const { impl, strategy, processes, jobs, iterations, warmup } = params();
const pool = await openPool(impl, { processes, strategy });
await burst(pool, 'noop', warmup);
await burst(pool, 'spin', 2 * processes, () => iterations);
const cpu0 = process.cpuUsage();
const { ms, count, sum } = await burst(pool, 'spin', jobs, () => iterations);
const cpu = process.cpuUsage(cpu0);
await pool.close();
const expected = jobs * spin(iterations);
// The children tally noop(x) as x and spin(n) as 1.
const t = tallyCheck(pool.tally(), warmup + 2 * processes + jobs, (warmup * (warmup - 1)) / 2 + 2 * processes + jobs);
report({
  wallMs: ms,
  parentCpuMs: (cpu.user + cpu.system) / 1000,
  count,
  ok: count === jobs && sum === expected && t.ok,
  check: `count ${count}/${jobs}, checksum ${sum === expected ? 'right' : 'WRONG'}${t.text}`,
});
