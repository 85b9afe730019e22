// A1 — pool no-op throughput.
// Measures: jobs/s of a pool running a no-op that returns its small integer
// argument, all `jobs` submitted at once (one apply/run/exec call each, in one
// synchronous loop).
// Knobs ($BENCH_PARAMS): impl (prefork | piscina | workerpool), strategy
// (fair | fcfs, prefork only), processes, jobs (200,000), warmup (2,000),
// cpuProfile (a file: profile this process over the clock window only).
// Clock: starts just before the first submit (children already up and warm:
// `warmup` jobs went through the same pool first), stops when the last
// promise settles. Also reported, over the same window: the parent's CPU time
// per job (process.cpuUsage) and, for prefork, the children's (/proc/<pid>/stat).
// Check: the results add up to 0 + 1 + … + (jobs - 1), and (prefork) the
// children's own counts say every job ran exactly once.
import { params, report } from './lib/child.mjs';
import { startProfile } from './lib/inspector-profile.mjs';
import { burst, openPool } from './lib/pools.mjs';
import { cpuMsOf } from './lib/proc.mjs';
import { tallyCheck } from './lib/tally.mjs';

const { impl, strategy, processes, jobs, warmup, cpuProfile } = params();
const pool = await openPool(impl, { processes, strategy });
await burst(pool, 'noop', warmup);
const pids = pool.pids();
const stopProfile = cpuProfile ? await startProfile(cpuProfile) : undefined;
const children0 = cpuMsOf(pids);
const cpu0 = process.cpuUsage();
const { ms, count, sum } = await burst(pool, 'noop', jobs);
const cpu = process.cpuUsage(cpu0);
const childrenMs = cpuMsOf(pids) - children0;
await stopProfile?.();
await pool.close();
const expected = (jobs * (jobs - 1)) / 2;
const t = tallyCheck(pool.tally(), warmup + jobs, (warmup * (warmup - 1)) / 2 + expected);
report({
  jobsPerSec: (count / ms) * 1000,
  ms,
  parentCpuUsPerJob: (cpu.user + cpu.system) / jobs,
  ...(pids.length ? { childrenCpuUsPerJob: (childrenMs * 1000) / jobs } : {}),
  count,
  ok: count === jobs && sum === expected && t.ok,
  check: `count ${count}/${jobs}, sum ${sum === expected ? 'right' : `${sum} != ${expected}`}${t.text}`,
});
