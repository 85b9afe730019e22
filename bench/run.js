// `npm run bench`: every workload of ../shared/BENCH.md (A1–A3 pool, B1–B4
// Redis), prefork and its peers alternating in the same sitting, each measured
// workload in a fresh child process (bench/<scenario>.mjs), 3 runs each,
// median with min and max. Prints a table per group and writes bench/RESULTS.md.
//
// Knobs (environment):
//   BENCH_QUICK=1        few jobs, 1 run: a smoke run for development (its RESULTS.md says so)
//   BENCH_ONLY=pool|redis  only the A (pool) or the B (Redis) workloads
//   BENCH_CPU_PROF=<dir> run every scenario under `node --cpu-prof` into <dir> (bench/lib/profile-top.mjs reads them)
//   BENCH_OUT=<file>     where to write the results (default bench/RESULTS.md)
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runScenario } from './lib/child.mjs';
import { loadAverage, machineInfo } from './lib/machine.mjs';
import { calibrate } from './lib/spin.mjs';
import { connect } from './lib/redis.mjs';
import { renderResults, printGroup } from './lib/results.mjs';
import { groups } from './lib/plan.mjs';
import { startRedisServer } from '../scripts/redis.mjs';

const quick = process.env.BENCH_QUICK === '1';
const only = process.env.BENCH_ONLY;
if (only !== undefined && only !== 'pool' && only !== 'redis') throw new Error(`BENCH_ONLY must be pool or redis, not ${JSON.stringify(only)}`);
const runs = quick ? 1 : 3;
const out = process.env.BENCH_OUT ?? fileURLToPath(new URL('./RESULTS.md', import.meta.url));
const nodeArgs = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];

const startedAt = new Date();
const loadBefore = loadAverage();
const machine = machineInfo();
const spin = calibrate(2);
console.log(`prefork bench — ${startedAt.toISOString()} — ${machine.nproc} CPUs (${machine.cpu}), Node ${machine.node}, load ${loadBefore}`);
console.log(`busy loop: ${spin.iterations} iterations ≈ ${spin.msPerJob.toFixed(3)} ms (calibrated once, passed to every pool, peer and the bare reference)`);
console.log(`${quick ? 'BENCH_QUICK: smoke run, few jobs, 1 run' : `${runs} runs per case`}${only ? `, only ${only}` : ''}\n`);

let redis;
let flusher;
if (only !== 'pool') {
  redis = await startRedisServer();
  flusher = connect(redis.url);
  const info = await flusher.info('server');
  machine.redisServer = /redis_version:(\S+)/.exec(info)?.[1];
  console.log(`redis-server ${machine.redisServer} on ${redis.url} (--save '' --appendonly no), FLUSHALL before every run\n`);
}

const plan = groups({ quick, iterations: spin.iterations, url: redis?.url }).filter((g) => !only || g.kind === only);
const problems = [];
const timings = {};
try {
  for (const group of plan) {
    const t = performance.now();
    for (let run = 1; run <= runs; run++) {
      for (const c of group.cases) {
        if (c.runs !== undefined && run > c.runs) continue;
        if (c.redis) await flusher.flushall();
        const r = await runScenario(c.file, c.params, { nodeArgs, timeoutMs: c.timeoutMs ?? 300_000 });
        r.run = run;
        (c.results ??= []).push(r);
        if (r.error || !r.ok) {
          problems.push({ group: group.id, label: c.label, run, why: r.error ?? r.check });
          console.log(`  ! ${group.id} ${c.label} run ${run}: ${r.error ?? `check failed: ${r.check}`}`);
        }
      }
    }
    timings[group.id] = (performance.now() - t) / 1000;
    printGroup(group, { spin, plan });
  }
} finally {
  await flusher?.quit();
  await redis?.stop();
}

const finishedAt = new Date();
const loadAfter = loadAverage();
const command = `${quick ? 'BENCH_QUICK=1 ' : ''}${only ? `BENCH_ONLY=${only} ` : ''}npm run bench`;
writeFileSync(out, renderResults({ plan, machine, spin, quick, runs, only, command, startedAt, finishedAt, loadBefore, loadAfter, problems, timings }));
console.log(`\nload average before ${loadBefore}, after ${loadAfter}; ${((finishedAt - startedAt) / 1000).toFixed(0)} s; wrote ${out}`);
