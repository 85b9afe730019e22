// A1 — pool no-op throughput.
// Measures: jobs/s of a pool running a no-op that returns its small integer
// argument, all `jobs` submitted at once (one apply/run/exec call each, in one
// synchronous loop).
// Knobs ($BENCH_PARAMS): impl (prefork | piscina | workerpool), strategy
// (fair | fcfs, prefork only), processes, jobs (200,000), warmup (2,000).
// Clock: starts just before the first submit (children already up and warm:
// `warmup` jobs went through the same pool first), stops when the last
// promise settles. Also reported: the parent's CPU time (user + system,
// process.cpuUsage) per job over the same window.
// Check: the results add up to 0 + 1 + … + (jobs - 1), and (prefork) the
// children's own counts say every job ran exactly once.
import { params, report } from './lib/child.mjs';
import { burst, openPool } from './lib/pools.mjs';
import { tallyCheck } from './lib/tally.mjs';

const { impl, strategy, processes, jobs, warmup } = params();
const pool = await openPool(impl, { processes, strategy });
await burst(pool, 'noop', warmup);
const cpu0 = process.cpuUsage();
const { ms, count, sum } = await burst(pool, 'noop', jobs);
const cpu = process.cpuUsage(cpu0);
await pool.close();
const expected = (jobs * (jobs - 1)) / 2;
const t = tallyCheck(pool.tally(), warmup + jobs, (warmup * (warmup - 1)) / 2 + expected);
report({
  jobsPerSec: (count / ms) * 1000,
  ms,
  parentCpuUsPerJob: (cpu.user + cpu.system) / jobs,
  count,
  ok: count === jobs && sum === expected && t.ok,
  check: `count ${count}/${jobs}, sum ${sum === expected ? 'right' : `${sum} != ${expected}`}${t.text}`,
});
