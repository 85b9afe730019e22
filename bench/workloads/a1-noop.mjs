// A1 — pool no-op throughput (scenarios: pool-noop.mjs, pipe-echo.mjs).
import { cell, count, dec, int, pct, ratio, runsCell, stat, target, times } from '../lib/report.mjs';
import { poolCase } from './pool-cases.mjs';

export default {
  id: 'A1',
  kind: 'pool',
  title: 'A1 — pool no-op throughput',
  // When any target of the run is missed, run.js profiles these cases once more (the parent, over the clock window).
  profileCases: ['prefork-fcfs-2', 'prefork-fair-2'],

  cases({ quick, warmup }) {
    const jobs = quick ? 20_000 : 200_000;
    const p = (impl, strategy, processes) => poolCase('pool-noop.mjs', impl, strategy, processes, { jobs, warmup });
    // One round, ours and the peers alternating; the 2-process cases (the targets) first.
    return [
      p('prefork', 'fcfs', 2),
      p('piscina', undefined, 2),
      p('prefork', 'fair', 2),
      p('workerpool', undefined, 2),
      {
        id: 'pipe-echo',
        processes: 2,
        peer: true,
        label: 'bare framed-pipe echo, no pool (transport reference), 2p',
        file: 'pipe-echo.mjs',
        params: { processes: 2, jobs, batch: 256, warmup },
      },
      p('prefork', 'fcfs', 1),
      p('piscina', undefined, 1),
      p('prefork', 'fair', 1),
      p('prefork', 'fcfs', 4),
      p('piscina', undefined, 4),
      p('prefork', 'fair', 4),
    ];
  },

  tables({ cases }) {
    const c = (id) => cases.find((x) => x.id === id);
    const piscinaFor = (x) => c(`piscina--${x.processes}`);
    return [
      {
        header: [
          'pool',
          'processes',
          'jobs/s median (min–max)',
          'vs piscina (same processes, same round)',
          'parent CPU µs/job',
          'children CPU µs/job (all children)',
          'runs',
        ],
        rows: cases.map((x) => [
          x.label,
          x.processes,
          cell(stat(x, 'jobsPerSec')),
          x.impl === 'piscina' ? '1×' : piscinaFor(x) ? cell(ratio(x, piscinaFor(x), 'jobsPerSec'), times) : 'n/a',
          x.id === 'pipe-echo' ? 'n/a' : cell(stat(x, 'parentCpuUsPerJob'), dec(1)),
          x.impl === 'prefork' ? cell(stat(x, 'childrenCpuUsPerJob'), dec(1)) : 'n/a',
          runsCell(x),
        ]),
        notes: [
          `${count(cases[0].params.jobs)} jobs submitted at once, after ${count(cases[0].params.warmup)} warm-up jobs through the same pool. Clock: first submit → last promise settled. Check per run: count and sum of the results; for prefork also the children's own counts (each child tallies the jobs it ran and writes them when it exits), so a job run twice would show.`,
          'Parent CPU: process.cpuUsage of the submitting process over the clock window — for piscina it includes its worker threads (they live in that process). Children CPU (prefork only): utime + stime of the children from /proc/<pid>/stat over the same window (10 ms ticks). On 2 CPUs, parent + children CPU per job bounds the rate: 2 CPUs / (parent + children µs/job). workerpool runs at 2 processes only (at ~15,000 jobs/s, 200,000 jobs take long).',
          `Transport reference (bench/pipe-echo.mjs): [seq, x] msgpack frames with a 4-byte length, 256 frames per write, round-robin to 2 plain Node children that answer every chunk in one write. prefork fcfs, 2p / echo, same round: ${cell(ratio(c('prefork-fcfs-2'), c('pipe-echo'), 'jobsPerSec'), pct)}.`,
        ],
      },
    ];
  },

  targets({ cases }) {
    const c = (id) => cases.find((x) => x.id === id);
    return [
      target(
        2,
        'no-op throughput, fcfs, 2 processes ≥ 150,000 jobs/s',
        stat(c('prefork-fcfs-2'), 'jobsPerSec'),
        int,
        150_000,
        'atLeast',
      ),
      target(
        2,
        'fcfs no-op throughput ≥ 6× piscina (2 processes, same round)',
        ratio(c('prefork-fcfs-2'), c('piscina--2'), 'jobsPerSec'),
        times,
        6,
        'atLeast',
      ),
      target(
        2,
        'no-op throughput, fair, 2 processes ≥ 25,000 jobs/s',
        stat(c('prefork-fair-2'), 'jobsPerSec'),
        int,
        25_000,
        'atLeast',
      ),
    ];
  },
};
