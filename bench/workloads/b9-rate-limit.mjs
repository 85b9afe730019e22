// B9 — rate-limited drain (scenario: rate-limited-drain.mjs).
import { cell, count, dec, good, pct, runsCell, stat, target } from '../lib/report.mjs';

export default {
  id: 'B9',
  kind: 'redis',
  title: 'B9 — rate-limited drain: 2 nodes × 2 processes, one cluster-wide limit of 1000/s',

  cases({ quick, url }) {
    const p = { url, nodes: 2, processes: 2, rate: '1000/s', seconds: quick ? 5 : 30, warmupSeconds: quick ? 1 : 3 };
    return [
      {
        id: 'rl-1000',
        label: '2 nodes × 2 processes, rateLimit 1000/s, results ignored',
        params: { ...p, ignoreResult: true },
      },
    ].map((c) => ({ ...c, redis: true, file: 'rate-limited-drain.mjs', timeoutMs: (p.seconds + 180) * 1000 }));
  },

  tables({ cases }) {
    const ex = good(cases[0])[0];
    const p = cases[0].params;
    return [
      {
        header: [
          'case',
          'achieved starts/s',
          'of the limit',
          'busiest second',
          'quietest second',
          'Redis cmds/job',
          'runs',
        ],
        rows: cases.map((x) => [
          x.label,
          cell(stat(x, 'achievedPerSec')),
          cell(stat(x, 'ofTarget'), pct),
          cell(stat(x, 'busiestSecond')),
          cell(stat(x, 'quietestSecond')),
          cell(stat(x, 'cmdsPerJob'), dec(2)),
          runsCell(x),
        ]),
        notes: [
          `A backlog of ${ex ? count(ex.jobs) : 'n/a'} no-op jobs of task \`limited\` (\`rateLimit: '${p.rate}'\`) enqueued before the nodes start (2 Worker instances in one process, default options); the window is ${p.seconds} s, after ${p.warmupSeconds} s. Achieved: jobs the nodes completed in the window / its length (a no-op completes as it starts); busiest and quietest second: the same count per one-second step of the window. Commands: INFO commandstats deltas over the window (Lua inner commands included) per job completed in it: fetches, bucket calls, deferrals and promotions.`,
          "Check: after the window the nodes drain the rest; every job ran once (children's count and sum), none was retried or dead-lettered, the queue is empty.",
          ...(ex ? [`One run, window commands: ${JSON.stringify(ex.windowCommands)}.`] : []),
        ],
      },
    ];
  },

  targets({ cases }) {
    return [
      target(
        11,
        'rate-limited drain, 1000/s over 2 nodes: achieved rate within 2% of the limit',
        stat(cases[0], (r) => Math.abs(r.ofTarget - 1)),
        pct,
        0.02,
        'atMost',
        ' off',
      ),
    ];
  },
};
