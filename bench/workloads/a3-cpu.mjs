// A3 — CPU-bound, ~2 ms jobs (scenarios: pool-cpu.mjs, bare-cpu.mjs).
import { cell, count, dec, pct, ratio, runsCell, stat, target } from '../lib/report.mjs';
import { poolCase } from './pool-cases.mjs';

/** Ideal wall time: every CPU busy with the loop, nothing else. */
export function idealMs(c, spin, nproc) {
  return (c.params.jobs * spin.msPerJob) / Math.min(c.processes, nproc);
}

export default {
  id: 'A3',
  kind: 'pool',
  title: 'A3 — CPU-bound, ~2 ms jobs',

  cases({ quick, warmup, spin }) {
    const jobs = quick ? 400 : 4_000;
    const p = (impl, strategy, processes) =>
      poolCase('pool-cpu.mjs', impl, strategy, processes, { jobs, warmup, iterations: spin.iterations });
    return [
      p('prefork', 'fair', 2),
      p('piscina', undefined, 2),
      {
        id: 'bare',
        processes: 2,
        peer: true,
        label: 'bare: 2 plain node processes, no pool',
        file: 'bare-cpu.mjs',
        params: { processes: 2, jobs, iterations: spin.iterations },
      },
      p('prefork', 'fcfs', 2),
      p('workerpool', undefined, 2),
      p('prefork', 'fair', 1),
      p('prefork', 'fcfs', 1),
      p('prefork', 'fair', 4),
      p('prefork', 'fcfs', 4),
    ];
  },

  tables({ cases, spin, nproc }) {
    const bare = cases.find((x) => x.id === 'bare');
    return [
      {
        header: [
          'pool',
          'wall s',
          '% of ideal',
          '% of bare reference (2p, same round)',
          'parent CPU s in the window',
          'runs',
        ],
        rows: cases.map((x) => [
          x.label,
          cell(
            stat(x, (r) => r.wallMs / 1000),
            dec(3),
          ),
          cell(
            stat(x, (r) => idealMs(x, spin, nproc) / r.wallMs),
            pct,
          ),
          x.id === 'bare' ? '100%' : x.processes === 2 ? cell(ratio(bare, x, 'wallMs'), pct) : '',
          x.id === 'bare'
            ? 'idle'
            : cell(
                stat(x, (r) => r.parentCpuMs / 1000),
                dec(3),
              ),
          runsCell(x),
        ]),
        notes: [
          `${count(cases[0].params.jobs)} jobs × ${count(spin.iterations)} iterations (${spin.msPerJob.toFixed(3)} ms each, calibrated once in this run), all submitted at once after ${count(cases[0].params.warmup)} no-op and 2 × processes busy warm-up jobs. Ideal = jobs × ms per job / min(processes, ${nproc} CPUs): ${(idealMs(bare, spin, nproc) / 1000).toFixed(3)} s at 2 processes.`,
          '% of bare = bare wall / pool wall in the same round (2 processes only). The bare reference (bench/bare-cpu.mjs) spawns 2 plain Node processes that warm the loop up, wait for "go" on stdin and each run jobs / 2 loops; clock from "go" to the last "done".',
          "Parent CPU: the pool process's CPU time over the window (piscina's includes its worker threads, so it is the jobs' CPU too); on 2 cores a busy parent takes CPU from the children.",
        ],
      },
    ];
  },

  targets({ cases }) {
    const c = (id) => cases.find((x) => x.id === id);
    return [
      target(
        2,
        'CPU-bound ≥ 98% of the bare reference (fair, 2 processes)',
        ratio(c('bare'), c('prefork-fair-2'), 'wallMs'),
        pct,
        0.98,
        'atLeast',
      ),
      target(
        2,
        'CPU-bound ≥ 98% of the bare reference (fcfs, 2 processes)',
        ratio(c('bare'), c('prefork-fcfs-2'), 'wallMs'),
        pct,
        0.98,
        'atLeast',
      ),
    ];
  },
};
