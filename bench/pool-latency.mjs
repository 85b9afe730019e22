// A2 — pool round trip with one job in flight.
// Measures: p50 / p99 / mean in µs of `jobs` sequential no-op calls (each
// awaited before the next is submitted).
// Knobs ($BENCH_PARAMS): impl (prefork | piscina | workerpool), strategy,
// processes, jobs (20,000), warmup (2,000 sequential calls first).
// Clock: per job, performance.now() just before the call and when its promise
// resolves (the await's continuation). Check: every call returned its
// argument, and (prefork) the children's own counts say each ran once.
import { params, report } from './lib/child.mjs';
import { openPool } from './lib/pools.mjs';
import { percentile } from './lib/stats.mjs';
import { tallyCheck } from './lib/tally.mjs';

const { impl, strategy, processes, jobs, warmup } = params();
const pool = await openPool(impl, { processes, strategy });
for (let i = 0; i < warmup; i++) await pool.call('noop', i);
const samples = new Float64Array(jobs);
let wrong = 0;
for (let i = 0; i < jobs; i++) {
  const t = performance.now();
  const v = await pool.call('noop', i);
  samples[i] = (performance.now() - t) * 1000;
  if (v !== i) wrong++;
}
await pool.close();
const t = tallyCheck(pool.tally(), warmup + jobs, (warmup * (warmup - 1)) / 2 + (jobs * (jobs - 1)) / 2);
report({
  p50: percentile(samples, 50),
  p99: percentile(samples, 99),
  mean: samples.reduce((a, b) => a + b, 0) / jobs,
  count: jobs,
  ok: wrong === 0 && t.ok,
  check: `${jobs} round trips, ${wrong === 0 ? 'all right' : `${wrong} wrong results`}${t.text}`,
});
