// B5 — start time of a node with 2 processes (scenario: worker-start.mjs).
import { cell, good, runsCell, stat, target } from '../lib/report.mjs';

export default {
  id: 'B5',
  kind: 'redis',
  title: 'B5 — start time, 2 processes: start() to the first fetch',

  cases({ quick, url }) {
    const repeats = quick ? 2 : 5;
    return [
      { id: 'library', label: 'prefork Worker: start() → first fetch', params: { impl: 'library' } },
      { id: 'cli', label: 'prefork worker -c 2: spawn → first fetch', params: { impl: 'cli' } },
    ].map((c) => ({ ...c, redis: true, file: 'worker-start.mjs', params: { ...c.params, url, repeats } }));
  },

  tables({ cases }) {
    const lib = cases.find((c) => c.id === 'library');
    return [
      {
        header: ['start', 'ms', 'runs'],
        rows: [
          ...cases.map((x) => [x.label, cell(stat(x, 'startMs')), runsCell(x)]),
          ['prefork Worker: import of prefork (before start())', cell(stat(lib, 'importMs')), runsCell(lib)],
          ['prefork Worker: process start → first fetch', cell(stat(lib, 'processMs')), runsCell(lib)],
        ],
        notes: [
          `Each run is the median of ${cases[0].params.repeats} starts, each in a fresh Node process; the first fetch is the Worker's 'ready' event (emitted right after the consumer sends it, the children up), for the CLI its 'worker ready' log line.`,
          ...good(lib).map((r) => `Library starts, one run: ${r.check}.`),
        ],
      },
    ];
  },

  targets({ cases }) {
    return [
      target(
        15,
        'start() → first fetch ≤ 200 ms (2 processes)',
        stat(
          cases.find((c) => c.id === 'library'),
          'startMs',
        ),
        (x) => `${Math.round(x)}`,
        200,
        'atMost',
        ' ms',
      ),
    ];
  },
};
