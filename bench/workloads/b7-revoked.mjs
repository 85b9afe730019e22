// B7 — revoked-set cost: B1's drain with 100,000 remembered revokes vs none
// (scenario: redis-drain.mjs with `revoked`).
import { cell, count, dec, good, ratio, runsCell, stat, target, times } from '../lib/report.mjs';

const REVOKED = 100_000;

export default {
  id: 'B7',
  kind: 'redis',
  title: `B7 — revoked-set cost: drain with ${count(REVOKED)} remembered revokes vs none, 2 processes`,

  cases({ quick, warmup, url }) {
    const jobs = quick ? 5_000 : 50_000;
    const drain = (config, revoked) => ({
      id: `${config.id}-${revoked === 0 ? 'none' : 'revoked'}`,
      config: config.id,
      label: config.label,
      redis: true,
      revoked,
      file: 'redis-drain.mjs',
      params: { url, task: 'noop', jobs, warmup, revoked, ...config.options },
    });
    const configs = [
      {
        id: 'default',
        label: 'prefork defaults (fair, results stored)',
        options: { strategy: 'fair', ignoreResult: false },
      },
      {
        id: 'fcfs',
        label: 'prefork fcfs, prefetchMultiplier 64, results ignored',
        options: { strategy: 'fcfs', ignoreResult: true, prefetchMultiplier: 64 },
      },
    ];
    // Without and with, alternating, so each round pairs the two under the same load.
    return configs.flatMap((config) => [drain(config, 0), drain(config, REVOKED)]);
  },

  tables({ cases }) {
    const c = (id) => cases.find((x) => x.id === id);
    const rows = cases.map((x) => [
      x.label,
      count(x.revoked),
      cell(stat(x, 'jobsPerSec')),
      x.revoked === 0 ? '' : cell(ratio(x, c(`${x.config}-none`), 'jobsPerSec'), times),
      cell(stat(x, 'workerCmdsPerJob'), dec(2)),
      cell(stat(x, 'parentCpuUsPerJob'), dec(1)),
      cell(stat(x, 'startMs')),
      runsCell(x),
    ]);
    return [
      {
        header: [
          'worker',
          'remembered revokes',
          'jobs/s',
          '× none (same round)',
          'Redis cmds/job, worker',
          'worker parent CPU µs/job',
          'start() ms',
          'runs',
        ],
        rows,
        notes: [
          `B1's drain (${count(cases[0].params.jobs)} no-op jobs enqueued first, warm-up, same clock and checks), with ${count(REVOKED)} random ids (none a job's) in the namespace's revoked set before the drain worker starts: it loads them when it registers (inside start(), before the clock) and looks up every fetched job's id among them. The check includes that the worker remembers all of them.`,
          'start() ms: the whole start (children spawned, registration, the revoked ids loaded), outside the drain clock. Parent CPU per job is counted from before start() (as in B1), so with revokes it includes loading the ids once, spread over the jobs.',
          ...good(c('default-revoked'))
            .map((r) => `One run with revokes: ${r.check}.`)
            .slice(0, 1),
        ],
      },
    ];
  },

  targets({ cases }) {
    const c = (id) => cases.find((x) => x.id === id);
    return ['default', 'fcfs'].map((config) =>
      target(
        11,
        `drain with ${count(REVOKED)} remembered revokes ≥ 0.95× none (${config === 'default' ? 'defaults' : 'fcfs pm 64, results ignored'}): no measurable change`,
        ratio(c(`${config}-revoked`), c(`${config}-none`), 'jobsPerSec'),
        times,
        0.95,
        'atLeast',
      ),
    );
  },
};
