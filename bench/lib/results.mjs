// bench/RESULTS.md and the console tables, generated from the list of
// workloads: one section per workload (its tables() and notes), then the runs
// that failed a check, then every workload's targets(), then the profiles.
import { markdown } from './report.mjs';

/** The console form of one workload's tables. */
export function printWorkload(w, ctx) {
  for (const t of w.tables(ctx)) console.log(`\n## ${t.title ?? w.title}\n\n${markdown(t)}\n`);
}

export function renderResults({
  workloads,
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
}) {
  const lines = [];
  const p = (s = '') => lines.push(s);
  p('# prefork benchmark results');
  p();
  p(
    'Written by `npm run bench` (bench/run.js); every number below comes from this one run. Method: bench/README.md, and the header of each bench/*.mjs scenario file.',
  );
  if (quick) p('\n**BENCH_QUICK=1: a smoke run with few jobs and 1 run per case. Not a measurement to quote.**');
  p();
  p(`- Command: \`${command}\``);
  p(
    `- Date: ${startedAt.toISOString()} → ${finishedAt.toISOString()} (${((finishedAt - startedAt) / 1000).toFixed(0)} s)`,
  );
  p(
    `- Machine: ${machine.nproc} CPUs (\`nproc\`), ${machine.cpu}, ${machine.ramGiB} GiB RAM. **Shared machine**: other engineers run tests on it, so absolute numbers drift; compare within this run (ratios are taken per round).`,
  );
  p(`- Load average (1, 5, 15 min): ${loads.map((l) => `${l.at} ${l.load}`).join('; ')}`);
  p(
    `- Node ${machine.node}${machine.redisServer || workloads.some((w) => w.kind === 'redis') ? `; Redis ${machine.redisServer ?? machine.redis} (private redis-server on a loopback port, \`--save '' --appendonly no\`, FLUSHALL before every run)` : ''}`,
  );
  p(
    `- prefork ${machine.prefork}; peers: ${Object.entries(machine.peers)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  p(
    `- Busy loop: ${spin.iterations.toLocaleString('en-US')} iterations ≈ ${spin.msPerJob.toFixed(3)} ms, calibrated once at the start of this run; the same count for prefork, every peer and the bare reference.`,
  );
  p();
  p('## Method');
  p();
  p(
    `- Each measured workload runs in a fresh \`node\` child process (a bench/<scenario>.mjs file, whose header says what it measures, its knobs and its clock). ${runs} run${runs > 1 ? 's' : ''} per case; a round runs every case of a workload once, ours and the peers alternating, then the next round. Tables give the median (min–max) over the runs that passed their check; ratios are computed per round (ours / peer measured back to back), then summarized the same way.`,
  );
  p(
    `- Warm-up before every clock: ${ctxOf(workloads[0]).warmup.toLocaleString('en-US')} jobs through the same pool/worker (pool scenarios: the same pool object; drains: a first Worker in the same process drains as many and stops, then the jobs are enqueued, then a fresh Worker starts).`,
  );
  p(
    '- Checks: every run counts what was processed (each workload\'s notes say how). A run that lost or duplicated work is listed under "Runs that failed a check" and left out of the medians.',
  );
  p(
    '- Clocks: pool throughput and CPU — first submit to last settled promise; round trip — per call; the Redis clocks are in their sections.',
  );
  p();
  for (const w of workloads) {
    const ctx = ctxOf(w);
    for (const t of w.tables(ctx)) {
      p(`## ${t.title ?? w.title}`);
      p();
      p(markdown(t));
      p();
      for (const n of t.notes) p(`- ${n}`);
    }
    if (timings[w.id] !== undefined) p(`- Time for this workload: ${timings[w.id].toFixed(0)} s.`);
    p();
  }
  p('## Runs that failed a check');
  p();
  if (problems.length === 0) p('None: every run processed every job exactly once (count and sum checks passed).');
  for (const x of problems) p(`- ${x.group} ${x.label}, run ${x.run}: ${x.why}`);
  p();
  p('## Targets');
  p();
  const rows = workloads.flatMap((w) => w.targets(ctxOf(w)));
  p(
    markdown({
      header: ['issue', 'target', 'measured: median (min–max)', ''],
      rows: rows.map((t) => [`#${t.issue}`, t.target, t.measured, t.met]),
    }),
  );
  p();
  if (profiles.length) {
    p('## Profiles (parent process, taken because a target was missed)');
    p();
    p(
      'One extra run of the case after the measured runs, the scenario profiling its own clock window (node:inspector, 100 µs sampling; its numbers are not in the tables: the profiler slows it down). Top self-time functions of the parent (the process that submits the jobs and runs the pool); `(idle)` is time the parent waited for the children, `(garbage collector)` its GC:',
    );
    p();
    for (const pr of profiles) {
      p(`### ${pr.label}${pr.result ? ` — ${pr.result}` : ''}`);
      p();
      if (pr.error) {
        p(`Profile failed: ${pr.error}`);
      } else {
        p(
          markdown({
            header: ['self %', 'self ms', 'function', 'where'],
            rows: pr.top.map((t) => [
              `${(t.share * 100).toFixed(1)}%`,
              t.ms.toFixed(0),
              `\`${t.name}\``,
              t.where ? `\`${t.where}\`` : '',
            ]),
          }),
        );
        p();
        p(`${pr.totalMs.toFixed(0)} ms sampled (the clock window); file: \`${pr.file}\`.`);
      }
      p();
    }
  }
  return `${lines.join('\n')}\n`;
}
