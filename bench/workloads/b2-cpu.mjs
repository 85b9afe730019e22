// B2 — CPU-bound through Redis (scenarios: redis-drain.mjs, peers/bullmq-drain.mjs),
// compared with the pool's own A3 efficiency from the same run.
import { summarize } from '../lib/stats.mjs';
import { cell, count, dec, pct, runsCell, stat, target } from '../lib/report.mjs';
import { idealMs as a3Ideal } from './a3-cpu.mjs';

const idealMs = (c, spin) => (c.params.jobs * spin.msPerJob) / 2;
/** A run's share of the ideal: the jobs its clock counted (a steady-state row counts the later ones only), at the calibrated time each, on 2 CPUs, over its wall time. */
const efficiency = (c, spin) => (r) => ((r.clockJobs ?? c.params.jobs) * spin.msPerJob) / 2 / r.wallMs;
/** Steady-state rows: this many jobs, the clock counting those done after the first STEADY_FROM. */
const STEADY_JOBS = 8_000;
const STEADY_FROM = 4_000;

/** Median efficiency of prefork `strategy` at 2 processes in A3, if A3 ran. */
function a3Efficiency({ group, spin, nproc }, strategy) {
  const c = group('A3')?.find((x) => x.id === `prefork-${strategy}-2`);
  return c ? stat(c, (r) => a3Ideal(c, spin, nproc) / r.wallMs) : summarize([]);
}

export default {
  id: 'B2',
  kind: 'redis',
  title: 'B2 — CPU-bound through Redis, 2 processes',

  cases({ quick, warmup, url, spin }) {
    const cpu = (impl, o) => ({
      id: `${impl === 'prefork' ? `prefork-${o.strategy}` : `bullmq-${o.mode}`}${o.steadyFrom ? '-steady' : ''}`,
      impl,
      peer: impl !== 'prefork',
      redis: true,
      ...o,
      label:
        (impl === 'prefork'
          ? `prefork ${o.strategy}${o.strategy === 'fair' ? ' (defaults)' : ''}, prefetch sized by the worker`
          : `BullMQ ${o.mode}, concurrency 2`) +
        (o.steadyFrom ? `, steady state: jobs ${count(o.steadyFrom + 1)}–${count(o.jobs)} of ${count(o.jobs)}` : ''),
      file: impl === 'prefork' ? 'redis-drain.mjs' : 'peers/bullmq-drain.mjs',
      params: {
        url,
        task: 'spin',
        iterations: spin.iterations,
        jobs: quick ? 200 : 2_000,
        warmup,
        // Defaults: results stored (BullMQ: kept in Redis).
        ignoreResult: false,
        ...o,
        ...(impl === 'bullmq' ? { concurrency: 2 } : {}),
      },
    });
    return [
      cpu('prefork', { strategy: 'fair' }),
      cpu('bullmq', { mode: 'sandboxed' }),
      cpu('prefork', { strategy: 'fcfs' }),
      cpu('bullmq', { mode: 'inline' }),
      // The same work once the node has run a while: a fresh worker's first seconds include its JIT warming up.
      cpu('prefork', {
        strategy: 'fair',
        jobs: quick ? 400 : STEADY_JOBS,
        steadyFrom: quick ? 200 : STEADY_FROM,
      }),
      cpu('bullmq', { mode: 'sandboxed', jobs: quick ? 400 : STEADY_JOBS, steadyFrom: quick ? 200 : STEADY_FROM }),
    ];
  },

  tables(ctx) {
    const { cases, spin } = ctx;
    return [
      {
        header: ['worker', 'wall s', '% of ideal', "% of the pool's own A3 efficiency (same strategy)", 'runs'],
        rows: cases.map((x) => {
          const eff = stat(x, efficiency(x, spin));
          const own = x.peer ? summarize([]) : a3Efficiency(ctx, x.strategy);
          return [
            x.label,
            cell(
              stat(x, (r) => r.wallMs / 1000),
              dec(3),
            ),
            cell(eff, pct),
            x.peer ? '' : own.n ? `${pct(eff.median / own.median)} (A3 ${pct(own.median)})` : 'n/a (A3 not run)',
            runsCell(x),
          ];
        }),
        notes: [
          `${count(cases[0].params.jobs)} jobs × the same calibrated loop (${spin.msPerJob.toFixed(3)} ms), enqueued first, results stored; ideal = ${(idealMs(cases[0], spin) / 1000).toFixed(3)} s. Clock as in B1 (prefork: 'ready' → last completion; BullMQ: run() → last 'completed').`,
          `Steady-state rows: ${count(STEADY_JOBS)} such jobs; the clock starts at the first 10 ms poll that finds ${count(STEADY_FROM)} done and counts the jobs done after it (ideal: those jobs at the calibrated time on 2 CPUs). A fresh worker's first seconds include its JIT warming up to the work; these rows show a node that has run a while. The target row is the first one, as issue 15 defines it.`,
        ],
      },
    ];
  },

  targets(ctx) {
    const { cases, spin } = ctx;
    const fair = cases.find((c) => c.id === 'prefork-fair');
    const atDefaults = target(
      15,
      'CPU-bound through Redis at defaults (fair, results stored) ≥ 85% of ideal',
      stat(fair, efficiency(fair, spin)),
      pct,
      0.85,
      'atLeast',
    );
    return [atDefaults].concat(
      ['fair', 'fcfs'].map((s) => {
        const x = cases.find((c) => c.id === `prefork-${s}`);
        const own = a3Efficiency(ctx, s);
        const e = stat(x, efficiency(x, spin));
        const text = `CPU-bound through Redis ≥ 95% of the pool's own A3 efficiency (${s})`;
        if (!e.n || !own.n)
          return {
            issue: 3,
            target: text,
            measured: 'not measured (needs A3 and B2 in the same run)',
            met: 'n/a',
            missed: false,
          };
        const r = e.median / own.median;
        return {
          issue: 3,
          target: text,
          measured: `${pct(r)} (${pct(e.median)} of ideal vs A3 ${pct(own.median)})`,
          met: r >= 0.95 ? 'met' : `MISSED (${((1 - r / 0.95) * 100).toFixed(0)}% short)`,
          missed: r < 0.95,
        };
      }),
    );
  },
};
