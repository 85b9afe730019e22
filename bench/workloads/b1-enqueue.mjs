// B1 — enqueue rate, no worker running (scenario: redis-enqueue.mjs).
import { cell, count, dec, int, runsCell, stat, target } from '../lib/report.mjs';

export default {
  id: 'B1e',
  kind: 'redis',
  title: 'B1 — enqueue rate (no worker running)',

  cases({ quick, url }) {
    const enq = (impl, mode) => ({
      id: `${impl}-${mode}`,
      impl,
      mode,
      peer: impl !== 'prefork',
      redis: true,
      label: `${impl === 'prefork' ? 'prefork Client' : 'BullMQ Queue'} ${mode === 'single' ? `${impl === 'prefork' ? 'enqueue' : 'add'}, one by one (awaited)` : `${impl === 'prefork' ? 'enqueueMany' : 'addBulk'}, batches of 1,000`}`,
      file: 'redis-enqueue.mjs',
      params: {
        url,
        impl,
        mode,
        jobs: mode === 'single' ? (quick ? 1_000 : 10_000) : quick ? 5_000 : 50_000,
        warmup: quick ? 200 : 1000,
      },
    });
    return [enq('prefork', 'single'), enq('bullmq', 'single'), enq('prefork', 'bulk'), enq('bullmq', 'bulk')];
  },

  tables({ cases }) {
    return [
      {
        header: ['producer', 'jobs', 'jobs/s', 'Redis cmds/job', 'runs'],
        rows: cases.map((x) => [
          x.label,
          count(x.params.jobs),
          cell(stat(x, 'jobsPerSec')),
          cell(stat(x, 'cmdsPerJob'), dec(2)),
          runsCell(x),
        ]),
        notes: [
          'No worker running; prefork jobs with ignoreResult, BullMQ jobs with removeOnComplete. A warm-up of the same kind first.',
        ],
      },
    ];
  },

  targets({ cases }) {
    return [
      target(
        3,
        'bulk enqueue ≥ 100,000 jobs/s',
        stat(
          cases.find((x) => x.id === 'prefork-bulk'),
          'jobsPerSec',
        ),
        int,
        100_000,
        'atLeast',
      ),
    ];
  },
};
