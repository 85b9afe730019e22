// B1 — latency enqueue → result on an idle worker (scenario: redis-latency.mjs).
import { cell, count, dec, runsCell, stat, target } from '../lib/report.mjs';

export default {
  id: 'B1l',
  kind: 'redis',
  title: 'B1 — latency enqueue → result, idle worker',

  cases({ quick, warmup, url }) {
    return [
      {
        id: 'prefork-fair',
        impl: 'prefork',
        redis: true,
        label: 'prefork Worker fair, 2p, idle; Client enqueue → result()',
        file: 'redis-latency.mjs',
        // The method's warm-up (2,000 jobs), as every other clock has: 200 (before 2026-11-29) left the
        // one-job-at-a-time path half cold (p50 about 800 µs against 580–750 after 2,000, same sitting).
        params: { url, jobs: quick ? 200 : 2_000, warmup, strategy: 'fair', processes: 2 },
      },
    ];
  },

  tables({ cases }) {
    return [
      {
        header: ['path', 'p50 µs', 'p99 µs', 'mean µs', 'runs'],
        rows: cases.map((x) => [
          x.label,
          cell(stat(x, 'p50'), dec(0)),
          cell(stat(x, 'p99'), dec(0)),
          cell(stat(x, 'mean'), dec(0)),
          runsCell(x),
        ]),
        notes: [
          `${count(cases[0].params.jobs)} sequential jobs (the Worker's defaults: results stored, prefetch sized by the worker) after ${count(cases[0].params.warmup)} warm-up jobs through the same worker and client.`,
        ],
      },
    ];
  },

  targets({ cases }) {
    return [
      target(15, 'enqueue → result p50 ≤ 1 ms on an idle worker', stat(cases[0], 'p50'), dec(0), 1000, 'atMost', ' µs'),
    ];
  },
};
