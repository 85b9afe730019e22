// Tables and bench/RESULTS.md. Every number written here comes from the runs
// of this sitting: medians (min–max) over the runs that passed their check,
// ratios computed per round (ours and the peer measured back to back) and
// then summarized the same way.
import { summarize } from './stats.mjs';

const good = (c) => (c?.results ?? []).filter((r) => !r.error && r.ok);
const bad = (c) => (c?.results ?? []).length - good(c).length;
const find = (plan, groupId, caseId) => plan.find((g) => g.id === groupId)?.cases.find((c) => c.id === caseId);

/** Summary of one metric over a case's good runs. */
function stat(c, key) {
  return summarize(good(c).map((r) => (typeof key === 'function' ? key(r) : r[key])));
}

/** Per-round ratio a/b of one metric (both runs of the round passed), summarized. */
function ratio(a, b, key, fb = (x) => x) {
  const values = [];
  for (const ra of good(a)) {
    const rb = good(b).find((r) => r.run === ra.run);
    if (rb) values.push(fb(ra[key]) / fb(rb[key]));
  }
  return summarize(values);
}

const int = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : 'n/a');
const dec = (d) => (x) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : 'n/a');
const times = (x) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');

/** "median (min–max)", or the single value when there was one run. */
function cell(s, f = int) {
  if (s.n === 0) return 'n/a';
  if (s.n === 1) return f(s.median);
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

function runsCell(c) {
  const n = (c.results ?? []).length;
  const b = bad(c);
  return b === 0 ? `${n}` : `${n - b}/${n} ok (${b} FAILED CHECK)`;
}

function efficiency(plan, groupId, caseId, spin) {
  const c = find(plan, groupId, caseId);
  if (!c) return summarize([]);
  const idealMs = (c.params.jobs * spin.msPerJob) / 2;
  return stat(c, (r) => idealMs / r.wallMs);
}

/** Rows of one group's table: { header: [...], rows: [[...]], notes: [...] }. */
function table(group, plan, spin) {
  const c = (id) => group.cases.find((x) => x.id === id);
  switch (group.id) {
    case 'A1': {
      const pisc = c('piscina--2');
      return {
        header: ['pool', 'processes', 'jobs/s median (min–max)', 'vs piscina, same round', 'parent CPU µs/job', 'runs'],
        rows: group.cases.map((x) => [x.label, x.processes, cell(stat(x, 'jobsPerSec')), x.id === pisc.id ? '1×' : cell(ratio(x, pisc, 'jobsPerSec'), times), x.id === 'pipe-echo' ? 'n/a' : cell(stat(x, 'parentCpuUsPerJob'), dec(1)), runsCell(x)]),
        notes: [
          `${group.jobs.toLocaleString('en-US')} jobs submitted at once, after ${c('piscina--2').params.warmup.toLocaleString('en-US')} warm-up jobs; each run checks count and sum of results. Parent CPU: process.cpuUsage of the submitting process over the clock window — for piscina it includes its worker threads (they live in that process).`,
          c('pipe-echo') ? `Transport reference: bench/pipe-echo.mjs writes [seq, x] msgpack frames (4-byte length) to 2 plain Node children, 256 frames per write, round-robin; each child answers every chunk it reads in one write. prefork fcfs, 2p / echo, same round: ${cell(ratio(c('prefork-fcfs-2'), c('pipe-echo'), 'jobsPerSec'), pct)}.` : '',
        ].filter(Boolean),
      };
    }
    case 'A2':
      return {
        header: ['pool', 'p50 µs', 'p99 µs', 'mean µs', 'runs'],
        rows: group.cases.map((x) => [x.label, cell(stat(x, 'p50'), dec(1)), cell(stat(x, 'p99'), dec(1)), cell(stat(x, 'mean'), dec(1)), runsCell(x)]),
        notes: [`${group.jobs.toLocaleString('en-US')} sequential calls after ${group.cases[0].params.warmup.toLocaleString('en-US')} warm-up calls; percentiles over all calls of a run, then median (min–max) over runs.`],
      };
    case 'A3': {
      const bare = c('bare');
      const idealMs = (group.jobs * spin.msPerJob) / 2;
      return {
        header: ['pool', 'wall s', '% of ideal', '% of bare reference, same round', 'parent CPU s in the window', 'runs'],
        rows: group.cases.map((x) => [x.label, cell(stat(x, (r) => r.wallMs / 1000), dec(3)), cell(stat(x, (r) => idealMs / r.wallMs), pct), x.id === 'bare' ? '100%' : cell(ratio(bare, x, 'wallMs'), pct), x.id === 'bare' ? 'idle' : cell(stat(x, (r) => r.parentCpuMs / 1000), dec(3)), runsCell(x)]),
        notes: [`${group.jobs.toLocaleString('en-US')} jobs × ${spin.iterations.toLocaleString('en-US')} iterations (${spin.msPerJob.toFixed(3)} ms each, calibrated once in this run); ideal = jobs × ms per job / 2 = ${(idealMs / 1000).toFixed(3)} s. % of bare = bare wall / pool wall in the same round. Parent CPU: the pool process's CPU time over the window (piscina's includes its worker threads, so it is the jobs' CPU too); on 2 cores a busy parent takes CPU from the children.`],
      };
    }
    case 'B1': {
      const rows = group.cases.map((x) => {
        const peerBaseline = x.peer ? '' : x.ignoreResult ? 'ign' : 'res';
        const vs = (id) => {
          const p = c(id.replace('%', peerBaseline));
          return p ? cell(ratio(x, p, 'jobsPerSec'), times) : 'n/a';
        };
        return [
          x.label,
          x.ignoreResult ? 'ignored' : 'stored',
          cell(stat(x, 'jobsPerSec')),
          x.peer ? '' : vs('bullmq-inline-c2-%'),
          x.peer ? '' : vs('bullmq-inline-c100-%'),
          x.peer ? '' : vs('bullmq-sandboxed-c2-%'),
          cell(stat(x, 'workerCmdsPerJob'), dec(2)),
          cell(stat(x, (r) => r.workerCmdsPerJob + r.producerCmdsPerJob), dec(2)),
          x.peer ? '' : cell(stat(x, 'parentCpuUsPerJob'), dec(1)),
          runsCell(x),
        ];
      });
      const ex = good(c('prefork-fcfs-ign-pm64'))[0];
      const exBull = good(c('bullmq-inline-c2-ign'))[0];
      const exRes = good(c('prefork-fcfs-res-pm64'))[0];
      return {
        header: ['worker', 'results', 'jobs/s', '× BullMQ inline c2', '× BullMQ inline c100', '× BullMQ sandboxed', 'Redis cmds/job, worker', 'cmds/job, producer + worker', 'worker parent CPU µs/job', 'runs'],
        rows,
        notes: [
          `${group.jobs.toLocaleString('en-US')} no-op jobs enqueued in bulk before the worker starts; a warm-up worker drained ${group.cases[0].params.warmup.toLocaleString('en-US')} jobs first (same process). Ratios: ours / BullMQ's in the same round, same results setting.`,
          'Commands: INFO commandstats deltas (calls inside Lua scripts included, EVALSHA itself counted too; the measurement\'s INFO calls excluded). "worker" = from just before the worker starts to the last settlement confirmed by Redis, so the producer\'s XADD is NOT in it; "producer + worker" adds the enqueue phase (prefork: one XADD per job).',
          ex ? `One prefork fcfs run, results ignored, worker commands: ${JSON.stringify(ex.workerCommands)}; producer: ${JSON.stringify(ex.producerCommands)}.` : '',
          exRes ? `One prefork fcfs run, results stored, worker commands: ${JSON.stringify(exRes.workerCommands)} (SET + PEXPIRE: the result; LPUSH: its announcement on the enqueuing client's reply list).` : '',
          exBull ? `One BullMQ inline run, removeOnComplete, worker commands: ${JSON.stringify(exBull.workerCommands)}; producer: ${JSON.stringify(exBull.producerCommands)}.` : '',
        ].filter(Boolean),
      };
    }
    case 'B1e':
      return {
        header: ['producer', 'jobs', 'jobs/s', 'Redis cmds/job', 'runs'],
        rows: group.cases.map((x) => [x.label, x.params.jobs.toLocaleString('en-US'), cell(stat(x, 'jobsPerSec')), cell(stat(x, 'cmdsPerJob'), dec(2)), runsCell(x)]),
        notes: ['No worker running; prefork jobs with ignoreResult, BullMQ jobs with removeOnComplete. A warm-up of the same kind first.'],
      };
    case 'B1l':
      return {
        header: ['path', 'p50 µs', 'p99 µs', 'mean µs', 'runs'],
        rows: group.cases.map((x) => [x.label, cell(stat(x, 'p50'), dec(0)), cell(stat(x, 'p99'), dec(0)), cell(stat(x, 'mean'), dec(0)), runsCell(x)]),
        notes: [`${group.jobs.toLocaleString('en-US')} sequential jobs (results stored, default prefetch 4) after ${group.cases[0].params.warmup} warm-up jobs.`],
      };
    case 'B2': {
      const idealMs = (group.jobs * spin.msPerJob) / 2;
      return {
        header: ['worker', 'wall s', '% of ideal', '% of the pool\'s own A3 efficiency (same strategy)', 'runs'],
        rows: group.cases.map((x) => {
          const eff = stat(x, (r) => idealMs / r.wallMs);
          const own = x.peer ? summarize([]) : efficiency(plan, 'A3', `prefork-${x.strategy}`, spin);
          return [x.label, cell(stat(x, (r) => r.wallMs / 1000), dec(3)), cell(eff, pct), x.peer ? '' : own.n ? `${pct(eff.median / own.median)} (A3 ${pct(own.median)})` : 'n/a (A3 not run)', runsCell(x)];
        }),
        notes: [`${group.jobs.toLocaleString('en-US')} jobs × the same calibrated loop (${spin.msPerJob.toFixed(3)} ms), enqueued first; ideal = ${(idealMs / 1000).toFixed(3)} s. Clock as in B1 (prefork: 'ready' → last completion; BullMQ: run() → last 'completed').`],
      };
    }
    case 'B3': {
      const x = group.cases[0];
      const ex = good(x).map((r) => r.check);
      return {
        header: ['node', 'window', 'commands/s', 'runs'],
        rows: [[x.label, `${group.seconds} s`, cell(stat(x, 'perSec'), dec(2)), runsCell(x)]],
        notes: ex.length ? [`Per run: ${ex.join(' / ')}`] : [],
      };
    }
    case 'B4':
      return {
        header: ['node', 'processes', 'RSS MiB', 'PSS MiB', 'runs'],
        rows: group.cases.map((x) => [x.label, good(x)[0]?.processes ?? 'n/a', cell(stat(x, 'rssMiB'), dec(1)), cell(stat(x, 'pssMiB'), dec(1)), runsCell(x)]),
        notes: ['Measured 3 s after 50 no-op jobs, idle; the parent is the scenario process itself (it imports only what that node needs).'],
      };
    default:
      return { header: [], rows: [], notes: [] };
  }
}

function markdown({ header, rows }) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function printGroup(group, { spin, plan = [group] }) {
  const t = table(group, plan, spin);
  console.log(`\n## ${group.title}\n\n${markdown(t)}\n`);
}

/** Each target of issues 2 and 3: { issue, target, measured, met }. */
function targets(plan, spin) {
  const out = [];
  // goal: the number in the target; atLeast: a floor (else a ceiling). A miss says by how much (median against the goal).
  const add = (issue, target, s, f, goal, atLeast, extra = '') => {
    const ok = atLeast === 'below' ? s.median < goal : atLeast ? s.median >= goal : s.median <= goal;
    const by = atLeast === true ? `${((1 - s.median / goal) * 100).toFixed(0)}% short` : `${(s.median / goal).toFixed(2)}× the ceiling`;
    out.push({ issue, target, measured: s.n ? `${cell(s, f)}${extra}` : 'not measured', met: s.n ? (ok ? 'met' : `MISSED (${by})`) : 'n/a' });
  };
  const a1 = (id) => find(plan, 'A1', id);
  if (a1('prefork-fcfs-2')) {
    add(2, 'no-op throughput, fcfs, 2 processes ≥ 150,000 jobs/s', stat(a1('prefork-fcfs-2'), 'jobsPerSec'), int, 150_000, true);
    add(2, 'fcfs no-op throughput ≥ 6× piscina (same round)', ratio(a1('prefork-fcfs-2'), a1('piscina--2'), 'jobsPerSec'), times, 6, true);
    add(2, 'no-op throughput, fair, 2 processes ≥ 25,000 jobs/s', stat(a1('prefork-fair-2'), 'jobsPerSec'), int, 25_000, true);
  }
  const a2 = (id) => find(plan, 'A2', id);
  if (a2('prefork-fair')) {
    add(2, 'round trip p50 ≤ 60 µs (fair, 2 processes)', stat(a2('prefork-fair'), 'p50'), dec(1), 60, false, ' µs');
    add(2, 'round trip p50 ≤ 60 µs (fcfs, 2 processes)', stat(a2('prefork-fcfs'), 'p50'), dec(1), 60, false, ' µs');
  }
  const a3 = (id) => find(plan, 'A3', id);
  if (a3('bare')) {
    add(2, 'CPU-bound ≥ 98% of the bare reference (fair)', ratio(a3('bare'), a3('prefork-fair'), 'wallMs'), pct, 0.98, true);
    add(2, 'CPU-bound ≥ 98% of the bare reference (fcfs)', ratio(a3('bare'), a3('prefork-fcfs'), 'wallMs'), pct, 0.98, true);
  }
  const b1 = (id) => find(plan, 'B1', id);
  if (b1('prefork-fcfs-ign-pm64')) {
    for (const s of ['fcfs', 'fair']) add(3, `drain ≥ 40,000 jobs/s, results ignored (${s}, prefetchMultiplier 64)`, stat(b1(`prefork-${s}-ign-pm64`), 'jobsPerSec'), int, 40_000, true);
    add(3, 'drain ≥ 40,000 jobs/s, results ignored (fcfs, default prefetchMultiplier 4)', stat(b1('prefork-fcfs-ign-pm4'), 'jobsPerSec'), int, 40_000, true);
    for (const s of ['fcfs', 'fair']) add(3, `drain ≥ 20,000 jobs/s, results stored (${s}, prefetchMultiplier 64)`, stat(b1(`prefork-${s}-res-pm64`), 'jobsPerSec'), int, 20_000, true);
    add(3, 'drain ≥ 5× BullMQ inline processor (results ignored; fcfs pm 64 vs inline concurrency 2)', ratio(b1('prefork-fcfs-ign-pm64'), b1('bullmq-inline-c2-ign'), 'jobsPerSec'), times, 5, true);
    add(3, 'drain ≥ 5× BullMQ inline processor (results ignored; fcfs pm 64 vs inline concurrency 100)', ratio(b1('prefork-fcfs-ign-pm64'), b1('bullmq-inline-c100-ign'), 'jobsPerSec'), times, 5, true);
    add(3, 'drain ≥ 15× BullMQ sandboxed processor (results ignored; fcfs pm 64)', ratio(b1('prefork-fcfs-ign-pm64'), b1('bullmq-sandboxed-c2-ign'), 'jobsPerSec'), times, 15, true);
    add(3, '≤ 2 Redis commands per job, results ignored (worker only; fcfs pm 64)', stat(b1('prefork-fcfs-ign-pm64'), 'workerCmdsPerJob'), dec(2), 2, false);
    add(3, '≤ 2 Redis commands per job, results ignored (producer + worker; fcfs pm 64)', stat(b1('prefork-fcfs-ign-pm64'), (r) => r.workerCmdsPerJob + r.producerCmdsPerJob), dec(2), 2, false);
  }
  const bulk = find(plan, 'B1e', 'prefork-bulk');
  if (bulk) add(3, 'bulk enqueue ≥ 100,000 jobs/s', stat(bulk, 'jobsPerSec'), int, 100_000, true);
  const lat = find(plan, 'B1l', 'prefork-fair');
  if (lat) add(3, 'enqueue → result p50 ≤ 1 ms on an idle worker', stat(lat, 'p50'), dec(0), 1000, false, ' µs');
  const b2 = plan.find((g) => g.id === 'B2');
  if (b2) {
    for (const s of ['fair', 'fcfs']) {
      const x = b2.cases.find((c) => c.id === `prefork-${s}`);
      const own = efficiency(plan, 'A3', `prefork-${s}`, spin);
      const idealMs = (b2.jobs * spin.msPerJob) / 2;
      const e = stat(x, (r) => idealMs / r.wallMs);
      out.push({
        issue: 3,
        target: `CPU-bound through Redis ≥ 95% of the pool's own A3 efficiency (${s})`,
        measured: e.n && own.n ? `${pct(e.median / own.median)} (${pct(e.median)} of ideal vs A3 ${pct(own.median)})` : 'not measured (needs A3 and B2 in the same run)',
        met: e.n && own.n ? (e.median / own.median >= 0.95 ? 'met' : `MISSED (${((1 - e.median / own.median / 0.95) * 100).toFixed(0)}% short)`) : 'n/a',
      });
    }
  }
  const idle = find(plan, 'B3', 'prefork');
  if (idle) add(3, '< 1 Redis command/s from an idle node', stat(idle, 'perSec'), dec(2), 1, 'below', ' /s');
  return out;
}

export function renderResults({ plan, machine, spin, quick, runs, command, startedAt, finishedAt, loadBefore, loadAfter, problems, timings }) {
  const lines = [];
  const p = (s = '') => lines.push(s);
  p('# prefork benchmark results');
  p();
  p('Written by `npm run bench` (bench/run.js); every number below comes from this one run. Method: ../shared/BENCH.md, and the header of each bench/*.mjs scenario file.');
  if (quick) p('\n**BENCH_QUICK=1: a smoke run with few jobs and 1 run per case. Not a measurement to quote.**');
  p();
  p(`- Command: \`${command}\``);
  p(`- Date: ${startedAt.toISOString()} → ${finishedAt.toISOString()} (${((finishedAt - startedAt) / 1000).toFixed(0)} s)`);
  p(`- Machine: ${machine.nproc} CPUs (\`nproc\`), ${machine.cpu}, ${machine.ramGiB} GiB RAM. **Shared machine**: other engineers run tests on it, so absolute numbers drift; compare within this run.`);
  p(`- Load average (1, 5, 15 min): before ${loadBefore}; after ${loadAfter}`);
  p(`- Node ${machine.node}; Redis ${machine.redisServer ?? machine.redis} (private redis-server on a loopback port, \`--save '' --appendonly no\`, FLUSHALL before every run)`);
  p(`- prefork ${machine.prefork}; peers: ${Object.entries(machine.peers).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  p(`- Busy loop: ${spin.iterations.toLocaleString('en-US')} iterations ≈ ${spin.msPerJob.toFixed(3)} ms, calibrated once at the start of this run; the same count for prefork, every peer and the bare reference.`);
  p();
  p('## Method');
  p();
  p(`- Each measured workload runs in a fresh \`node\` child process (bench/<scenario>.mjs). ${runs} run${runs > 1 ? 's' : ''} per case; a round runs every case of a group once, ours and the peers alternating, then the next round. Tables give the median (min–max) over the runs that passed their check; ratios are computed per round (ours / peer measured back to back), then summarized.`);
  p('- Warm-up before every clock: 2,000 jobs through the same pool/worker (pool scenarios: the same pool object; drains: a first Worker in the same process drains 2,000 jobs and stops, then the jobs are enqueued, then a fresh Worker starts).');
  p('- Checks: every run counts what was processed (pool: count and sum of results; prefork over Redis: each child tallies count and sum of its arguments and writes them when it exits, plus the worker\'s own count and the broker\'s queue counts afterwards; BullMQ: distinct completed job ids, sum of results, queue counts). A run that lost or duplicated work is listed under "Runs that failed a check" and left out of the medians.');
  p('- Clocks: pool throughput and CPU — first submit to last settled promise; round trip — per call. Drain (prefork) — from the Worker\'s \'ready\' event (emitted right after the consumer sends its first fetch; the children are already up) to the first 10 ms poll of `worker.stats().consumer.succeeded` that reaches the job count (nothing added per job). Drain (BullMQ) — from `worker.run()` to the first 10 ms poll where the worker\'s \'completed\' count reaches it (its sandboxed children are forked on demand, inside the clock). Idle commands — the wall time between two INFO snapshots.');
  p('- Prefetch: prefork drains use `prefetchMultiplier` 64 (stated per row) and, for fcfs, also the default 4; the CPU-bound drain and the latency test use the default 4.');
  p('- Redis commands: `INFO commandstats` deltas, which count the commands inside Lua scripts as well as the EVALSHA itself; the INFO calls of the measurement are excluded.');
  p();
  for (const g of plan) {
    const t = table(g, plan, spin);
    p(`## ${g.title}`);
    p();
    p(markdown(t));
    p();
    for (const n of t.notes) p(`- ${n}`);
    if (timings[g.id] !== undefined) p(`- Group time: ${timings[g.id].toFixed(0)} s.`);
    p();
  }
  p('## Runs that failed a check');
  p();
  if (problems.length === 0) p('None: every run processed every job exactly once (count and sum checks passed).');
  for (const x of problems) p(`- ${x.group} ${x.label}, run ${x.run}: ${x.why}`);
  p();
  p('## Targets (issues 2 and 3)');
  p();
  p(markdown({ header: ['issue', 'target', 'measured: median (min–max)', ''], rows: targets(plan, spin).map((t) => [`#${t.issue}`, t.target, t.measured, t.met]) }));
  p();
  return `${lines.join('\n')}\n`;
}
