// B3 — idle node: Redis commands per second (scenario: redis-idle.mjs).
import { cell, dec, good, runsCell, stat, target } from '../lib/report.mjs';

// An idle node's cycle is long (a heartbeat every 8 s, a block re-armed every
// 120 s): the window spans two blocks, so a short window cannot flatter it.
const windowSeconds = (quick) => (quick ? 10 : 240);

export default {
  id: 'B3',
  kind: 'redis',
  title: 'B3 — idle node: Redis commands per second',
  runs: 1,

  cases({ url, quick }) {
    const seconds = windowSeconds(quick);
    return [
      {
        id: 'prefork',
        impl: 'prefork',
        redis: true,
        label: 'prefork Worker, 2p, empty queue',
        file: 'redis-idle.mjs',
        params: { url, seconds },
        timeoutMs: (seconds + 60) * 1000,
      },
    ];
  },

  tables({ cases, quick }) {
    const x = cases[0];
    const seconds = windowSeconds(quick);
    const ex = good(x).map((r) => r.check);
    return [
      {
        header: ['node', 'window', 'commands/s', 'runs'],
        rows: [[x.label, `${seconds} s`, cell(stat(x, 'perSec'), dec(2)), runsCell(x)]],
        notes: [
          'Clock: the wall time between two INFO commandstats snapshots, the node idle in between.',
          ...(ex.length ? [`Per run: ${ex.join(' / ')}`] : []),
        ],
      },
    ];
  },

  targets({ cases }) {
    return [target(3, '< 1 Redis command/s from an idle node', stat(cases[0], 'perSec'), dec(2), 1, 'below', ' /s')];
  },
};
