// B4 — idle memory of a node with 2 processes (scenario: idle-memory.mjs).
import { cell, dec, good, runsCell, stat, target } from '../lib/report.mjs';

export default {
  id: 'B4',
  kind: 'redis',
  title: 'B4 — idle memory, 2 processes (RSS / PSS summed over the parent and its children)',

  cases({ quick, url }) {
    return [
      { id: 'worker', label: 'prefork Worker (Redis), 2 processes', params: { impl: 'worker', url }, redis: true },
      { id: 'pool', label: 'prefork Pool alone, 2 processes', params: { impl: 'pool' } },
      { id: 'piscina', label: 'piscina, 2 threads', params: { impl: 'piscina' }, peer: true },
      { id: 'workerpool', label: 'workerpool, 2 processes', params: { impl: 'workerpool' }, peer: true },
    ]
      .map((c) => ({ ...c, file: 'idle-memory.mjs' }))
      .concat([
        {
          id: 'cli',
          label: 'prefork worker -c 2 (its own process; jobs enqueued from another)',
          file: 'idle-memory-cli.mjs',
          params: { url },
          redis: true,
        },
      ])
      .map((c) => ({ ...c, params: { ...c.params, settleMs: quick ? 1000 : 3000 } }));
  },

  tables({ cases }) {
    return [
      {
        header: ['node', 'processes', 'RSS MiB', 'PSS MiB', 'runs'],
        rows: cases.map((x) => [
          x.label,
          good(x)[0]?.processes ?? 'n/a',
          cell(stat(x, 'rssMiB'), dec(1)),
          cell(stat(x, 'pssMiB'), dec(1)),
          runsCell(x),
        ]),
        notes: [
          `Measured ${cases[0].params.settleMs / 1000} s after 50 no-op jobs, idle; the parent is the scenario process itself (it imports only what that node needs, and enqueues the jobs with a Client), except for \`prefork worker\`: the CLI's process and its children, the jobs enqueued by the scenario process.`,
        ],
      },
    ];
  },

  targets({ cases }) {
    return [
      target(
        15,
        'idle PSS, Worker parent + 2 children ≤ 62 MiB',
        stat(
          cases.find((c) => c.id === 'worker'),
          'pssMiB',
        ),
        dec(1),
        62,
        'atMost',
        ' MiB',
      ),
    ];
  },
};
