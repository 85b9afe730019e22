// A2 — round trip with one job in flight (scenario: pool-latency.mjs).
import { cell, count, dec, runsCell, stat, target } from '../lib/report.mjs';
import { poolCase } from './pool-cases.mjs';

export default {
  id: 'A2',
  kind: 'pool',
  title: 'A2 — round trip, one job in flight',

  cases({ quick, warmup }) {
    const jobs = quick ? 2_000 : 20_000;
    const p = (impl, strategy, processes) => poolCase('pool-latency.mjs', impl, strategy, processes, { jobs, warmup });
    return [
      p('prefork', 'fair', 2),
      p('piscina', undefined, 2),
      p('prefork', 'fcfs', 2),
      p('workerpool', undefined, 2),
      p('prefork', 'fair', 1),
      p('prefork', 'fcfs', 1),
      p('prefork', 'fair', 4),
      p('prefork', 'fcfs', 4),
    ];
  },

  tables({ cases }) {
    return [
      {
        header: ['pool', 'p50 µs', 'p99 µs', 'mean µs', 'runs'],
        rows: cases.map((x) => [
          x.label,
          cell(stat(x, 'p50'), dec(1)),
          cell(stat(x, 'p99'), dec(1)),
          cell(stat(x, 'mean'), dec(1)),
          runsCell(x),
        ]),
        notes: [
          `${count(cases[0].params.jobs)} sequential calls (each awaited before the next) after ${count(cases[0].params.warmup)} warm-up calls. Clock: performance.now() before the call and in the await's continuation. Percentiles (nearest rank) over all calls of a run, then median (min–max) over runs.`,
        ],
      },
    ];
  },

  targets({ cases }) {
    const c = (id) => cases.find((x) => x.id === id);
    return [
      target(
        2,
        'round trip p50 ≤ 60 µs (fair, 2 processes)',
        stat(c('prefork-fair-2'), 'p50'),
        dec(1),
        60,
        'atMost',
        ' µs',
      ),
      target(
        2,
        'round trip p50 ≤ 60 µs (fcfs, 2 processes)',
        stat(c('prefork-fcfs-2'), 'p50'),
        dec(1),
        60,
        'atMost',
        ' µs',
      ),
    ];
  },
};
