// B6 — many nodes, one child each, on one Redis (scenario: many-nodes.mjs).
import { cell, count, dec, good, runsCell, stat, target } from '../lib/report.mjs';

export default {
  id: 'B6',
  kind: 'redis',
  title: 'B6 — 20 nodes × 1 child on one Redis: commands per job, idle commands per node',

  cases({ quick, url }) {
    const p = { url, nodes: 20, jobs: quick ? 2_000 : 10_000, idleSeconds: quick ? 20 : 125 };
    return [
      { id: 'res', label: '20 nodes × 1 child, results stored (defaults)', params: { ...p, ignoreResult: false } },
      // Idle cost does not depend on the results setting: measured once, in the first case.
      { id: 'ign', label: '20 nodes × 1 child, results ignored', params: { ...p, ignoreResult: true, idleSeconds: 0 } },
    ].map((c) => ({ ...c, redis: true, file: 'many-nodes.mjs', timeoutMs: (p.idleSeconds + 180) * 1000 }));
  },

  tables({ cases }) {
    const ex = good(cases[0])[0];
    return [
      {
        header: ['nodes', 'jobs/s', 'Redis cmds/job', 'idle cmds/s per node', 'runs'],
        rows: cases.map((x) => [
          x.label,
          cell(stat(x, 'jobsPerSec')),
          cell(stat(x, 'cmdsPerJob'), dec(2)),
          x.params.idleSeconds > 0 ? cell(stat(x, 'idlePerNodePerSec'), dec(3)) : 'as above',
          runsCell(x),
        ]),
        notes: [
          `${count(cases[0].params.jobs)} no-op jobs enqueued before the nodes start (Worker instances in one process, default options, concurrency 1). Commands: INFO commandstats deltas (Lua inner commands included) from before the nodes start to every settlement confirmed; idle: over ${cases[0].params.idleSeconds} s after the drain, per node.`,
          ...(ex
            ? [
                `One run, drain commands: ${JSON.stringify(ex.drainCommands)}.`,
                `One run, idle commands (all nodes, ${ex.idleS.toFixed(0)} s): ${JSON.stringify(ex.idleCommands)}.`,
              ]
            : []),
        ],
      },
    ];
  },

  targets({ cases }) {
    const res = cases.find((c) => c.id === 'res');
    return [
      target(
        15,
        '20 nodes × 1 child: ≤ 2.5 Redis commands per job (defaults)',
        stat(res, 'cmdsPerJob'),
        dec(2),
        2.5,
        'atMost',
      ),
      target(
        15,
        '≤ 0.5 Redis commands/s per idle node (20 nodes)',
        stat(res, 'idlePerNodePerSec'),
        dec(3),
        0.5,
        'atMost',
        ' /s',
      ),
    ];
  },
};
