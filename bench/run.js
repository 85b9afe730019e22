// `npm run bench`: every workload of bench/README.md (A1–A3 on the Pool,
// B1–B4 through Redis), prefork and its peers alternating in the same sitting,
// each measured case in a fresh child process (a bench/<scenario>.mjs file),
// 3 runs each, median with min and max. Prints a table per workload and writes
// bench/RESULTS.md.
//
// The workloads are a list of modules (bench/workloads/index.mjs); each gives
// its cases, turns their runs into named tables, and states its targets.
// This file only runs them: to add a workload, add a module to that list.
//
// Knobs (environment):
//   BENCH_QUICK=1          few jobs, 1 run: a smoke run for development (its RESULTS.md says so)
//   BENCH_ONLY=pool|redis  only the A (pool) or the B (Redis) workloads; or a
//                          comma-separated list of workload ids (e.g. A1,A3)
//   BENCH_CPU_PROF=<dir>   run every case under `node --cpu-prof` into <dir>
//                          (bench/lib/profile-top.mjs reads them)
//   BENCH_PROFILE=0|1      0: never take the closing profile; 1: take it even
//                          when no target was missed (default: when any is)
//   BENCH_OUT=<file>       where to write the results (default bench/RESULTS.md)
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runScenario } from './lib/child.mjs';
import { loadAverage, machineInfo } from './lib/machine.mjs';
import { topSelf } from './lib/profile.mjs';
import { printWorkload, renderResults } from './lib/results.mjs';
import { calibrate } from './lib/spin.mjs';
import { workloads as all } from './workloads/index.mjs';

const quick = process.env.BENCH_QUICK === '1';
const only = process.env.BENCH_ONLY;
const selected = all.filter((w) => !only || w.kind === only || only.split(',').includes(w.id));
if (selected.length === 0)
  throw new Error(
    `BENCH_ONLY=${only} selects nothing: use pool, redis, or workload ids among ${all.map((w) => w.id).join(', ')}`,
  );
const runs = quick ? 1 : 3;
const out = process.env.BENCH_OUT ?? fileURLToPath(new URL('./RESULTS.md', import.meta.url));
const nodeArgs = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];

const startedAt = new Date();
const loads = [{ at: 'start', load: loadAverage() }];
const machine = machineInfo();
const spin = calibrate(2);
console.log(
  `prefork bench — ${startedAt.toISOString()} — ${machine.nproc} CPUs (${machine.cpu}), Node ${machine.node}, load ${loads[0].load}`,
);
console.log(
  `busy loop: ${spin.iterations} iterations ≈ ${spin.msPerJob.toFixed(3)} ms (calibrated once, passed to every pool, peer and the bare reference)`,
);
console.log(
  `${quick ? 'BENCH_QUICK: smoke run, few jobs, 1 run' : `${runs} runs per case`}${only ? `, only ${only}` : ''}\n`,
);

// Redis only when a selected workload needs it (imported lazily, so the pool
// workloads run without ioredis or redis-server).
let redis;
let flusher;
if (selected.some((w) => w.kind === 'redis')) {
  const { startRedisServer } = await import('../scripts/redis.mjs');
  const { connect } = await import('./lib/redis.mjs');
  redis = await startRedisServer();
  flusher = connect(redis.url);
  machine.redisServer = /redis_version:(\S+)/.exec(await flusher.info('server'))?.[1];
  console.log(
    `redis-server ${machine.redisServer} on ${redis.url} (--save '' --appendonly no), FLUSHALL before every run\n`,
  );
}

const base = { quick, warmup: quick ? 500 : 2_000, spin, nproc: machine.nproc, url: redis?.url };
const casesOf = new Map(selected.map((w) => [w.id, w.cases(base)]));
const ctxOf = (w) => ({ ...base, cases: casesOf.get(w.id), group: (id) => casesOf.get(id) });

const problems = [];
const timings = {};
try {
  for (const w of selected) {
    const t = performance.now();
    // A workload may ask for fewer runs (B3: one long window rather than three).
    for (let run = 1; run <= Math.min(runs, w.runs ?? runs); run++) {
      for (const c of casesOf.get(w.id)) {
        if (c.redis) await flusher.flushall();
        const r = await runScenario(c.file, c.params, { nodeArgs, timeoutMs: c.timeoutMs ?? 300_000 });
        r.run = run;
        (c.results ??= []).push(r);
        if (r.error || !r.ok) {
          problems.push({ group: w.id, label: c.label, run, why: r.error ?? r.check });
          console.log(`  ! ${w.id} ${c.label} run ${run}: ${r.error ?? `check failed: ${r.check}`}`);
        }
      }
    }
    timings[w.id] = (performance.now() - t) / 1000;
    loads.push({ at: `after ${w.id}`, load: loadAverage() });
    printWorkload(w, ctxOf(w));
  }
} finally {
  await flusher?.quit();
  await redis?.stop();
}

// A missed target (of any workload) gets a profile: one more run of the
// profile cases (A1 prefork fcfs and fair), outside the measured runs, with
// the scenario profiling its own clock window (node:inspector; `cpuProfile`).
const profiles = [];
const want = process.env.BENCH_PROFILE;
const missed = selected.some((w) => w.targets(ctxOf(w)).some((t) => t.missed));
for (const w of selected) {
  if (!w.profileCases || want === '0') continue;
  if (want !== '1' && !missed) continue;
  const dir = fileURLToPath(new URL('../.tmp/bench-profiles/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  for (const id of w.profileCases) {
    const c = casesOf.get(w.id).find((x) => x.id === id);
    const file = `${dir}${startedAt.toISOString().replace(/[:.]/g, '-')}-${w.id}-${id}.cpuprofile`;
    const r = await runScenario(c.file, { ...c.params, cpuProfile: file });
    if (r.error || !existsSync(file)) {
      profiles.push({ label: `${w.id} ${c.label}`, error: r.error ?? 'no .cpuprofile written' });
      continue;
    }
    const { totalMs, top } = topSelf(file, 15);
    const rate = r.jobsPerSec ? `${Math.round(r.jobsPerSec).toLocaleString('en-US')} jobs/s under the profiler` : '';
    profiles.push({
      label: `${w.id} ${c.label}`,
      result: rate,
      totalMs,
      top,
      file: file.replace(fileURLToPath(new URL('..', import.meta.url)), ''),
    });
    console.log(`\nprofile of ${w.id} ${c.label} (${rate}), top self time in the clock window:`);
    for (const t of top.slice(0, 10))
      console.log(
        `${(t.share * 100).toFixed(1).padStart(5)}%  ${t.ms.toFixed(0).padStart(6)} ms  ${t.name} ${t.where}`,
      );
  }
}

const finishedAt = new Date();
loads.push({ at: 'end', load: loadAverage() });
const command = `${quick ? 'BENCH_QUICK=1 ' : ''}${only ? `BENCH_ONLY=${only} ` : ''}npm run bench`;
writeFileSync(
  out,
  renderResults({
    workloads: selected,
    ctxOf,
    machine,
    spin,
    quick,
    runs,
    command,
    startedAt,
    finishedAt,
    loads,
    problems,
    timings,
    profiles,
  }),
);
console.log(
  `\nload average: ${loads.map((l) => `${l.at} ${l.load}`).join('; ')}; ${((finishedAt - startedAt) / 1000).toFixed(0)} s; wrote ${out}`,
);
