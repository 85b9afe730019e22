// B1 — drain through Redis (scenarios: redis-drain.mjs, peers/bullmq-drain.mjs).
import { cell, count, dec, good, int, ratio, runsCell, stat, target, times } from '../lib/report.mjs';

export default {
  id: 'B1',
  kind: 'redis',
  title: 'B1 — drain through Redis, 2 processes',

  cases({ quick, warmup, url }) {
    const jobs = quick ? 5_000 : 50_000;
    const peerFile = { bullmq: 'peers/bullmq-drain.mjs', beequeue: 'peers/beequeue-drain.mjs' };
    const results = (o) => (o.ignoreResult ? 'ign' : 'res');
    const drain = (impl, o) => ({
      id:
        impl === 'prefork'
          ? `prefork-${o.strategy}-${results(o)}-${o.prefetchMultiplier === undefined ? 'default' : `pm${o.prefetchMultiplier}`}${o.events === false ? '-noevents' : ''}`
          : impl === 'bullmq'
            ? `bullmq-${o.mode}-c${o.concurrency}-${results(o)}`
            : `beequeue-c${o.concurrency}-${results(o)}`,
      impl,
      peer: impl !== 'prefork',
      redis: true,
      ...o,
      label:
        impl === 'prefork'
          ? `${
              o.prefetchMultiplier === undefined
                ? `prefork defaults (${o.strategy}, prefetch sized by the worker)`
                : `prefork ${o.strategy}, prefetchMultiplier ${o.prefetchMultiplier}`
            }${o.events === false ? ', events off' : ''}`
          : impl === 'bullmq'
            ? `BullMQ ${o.mode}, concurrency ${o.concurrency}`
            : `bee-queue, concurrency ${o.concurrency}`,
      file: impl === 'prefork' ? 'redis-drain.mjs' : peerFile[impl],
      params: { url, task: 'noop', jobs, warmup, ...o },
    });
    // Ours and peers alternate (bench/README.md); BullMQ inline c2/c100 stay for the earlier targets.
    return [
      drain('prefork', { strategy: 'fair', ignoreResult: false }),
      drain('bullmq', { mode: 'inline', concurrency: 50, ignoreResult: false }),
      // Events cost (issue: events on vs off in the same run): the defaults row again, without them.
      drain('prefork', { strategy: 'fair', ignoreResult: false, events: false }),
      drain('prefork', { strategy: 'fcfs', ignoreResult: true, prefetchMultiplier: 64 }),
      drain('beequeue', { concurrency: 50, ignoreResult: false }),
      drain('prefork', { strategy: 'fair', ignoreResult: true, prefetchMultiplier: 64 }),
      drain('bullmq', { mode: 'inline', concurrency: 50, ignoreResult: true }),
      drain('prefork', { strategy: 'fcfs', ignoreResult: true, prefetchMultiplier: 4 }),
      drain('beequeue', { concurrency: 50, ignoreResult: true }),
      drain('prefork', { strategy: 'fcfs', ignoreResult: false, prefetchMultiplier: 64 }),
      drain('bullmq', { mode: 'sandboxed', concurrency: 2, ignoreResult: true }),
      drain('prefork', { strategy: 'fair', ignoreResult: false, prefetchMultiplier: 64 }),
      drain('bullmq', { mode: 'sandboxed', concurrency: 2, ignoreResult: false }),
      drain('prefork', { strategy: 'fair', ignoreResult: true }),
      drain('bullmq', { mode: 'inline', concurrency: 2, ignoreResult: true }),
      drain('bullmq', { mode: 'inline', concurrency: 100, ignoreResult: true }),
    ];
  },

  tables({ cases }) {
    const c = (id) => cases.find((x) => x.id === id);
    const rows = cases.map((x) => {
      const vs = (peerId) => {
        const p = c(`${peerId}-${x.ignoreResult ? 'ign' : 'res'}`);
        return p ? cell(ratio(x, p, 'jobsPerSec'), times) : 'n/a';
      };
      return [
        x.label,
        x.ignoreResult ? 'ignored' : 'stored',
        cell(stat(x, 'jobsPerSec')),
        x.peer ? '' : vs('bullmq-inline-c50'),
        x.peer ? '' : vs('beequeue-c50'),
        x.peer ? '' : vs('bullmq-sandboxed-c2'),
        cell(stat(x, 'workerCmdsPerJob'), dec(2)),
        cell(
          stat(x, (r) => r.workerCmdsPerJob + r.producerCmdsPerJob),
          dec(2),
        ),
        x.peer ? '' : cell(stat(x, 'parentCpuUsPerJob'), dec(1)),
        runsCell(x),
      ];
    });
    const ex = good(c('prefork-fcfs-ign-pm64'))[0];
    const exRes = good(c('prefork-fcfs-res-pm64'))[0];
    const exDefault = good(c('prefork-fair-res-default'))[0];
    const exBull = good(c('bullmq-inline-c50-ign'))[0];
    return [
      {
        header: [
          'worker',
          'results',
          'jobs/s',
          '× BullMQ inline c50',
          '× bee-queue c50',
          '× BullMQ sandboxed c2',
          'Redis cmds/job, worker',
          'cmds/job, producer + worker',
          'worker parent CPU µs/job',
          'runs',
        ],
        rows,
        notes: [
          `${count(cases[0].params.jobs)} no-op jobs enqueued in bulk before the worker starts; a warm-up worker drained ${count(cases[0].params.warmup)} jobs first (same process). Ratios: ours / BullMQ's in the same round, same results setting.`,
          "Clock (prefork): from the Worker's 'ready' event (emitted right after the consumer sends its first fetch; the children are already up) to the first 10 ms poll of `worker.stats().consumer.succeeded` that reaches the job count (nothing added per job). Clock (BullMQ): from `worker.run()` to the first 10 ms poll where the worker's 'completed' count reaches it (its sandboxed children are forked on demand, inside the clock).",
          "Check (prefork): each child tallies count and sum of its arguments and writes them when it exits, plus the worker's own count and the broker's queue counts afterwards; (BullMQ): distinct completed job ids, sum of results, queue counts.",
          'Commands: INFO commandstats deltas (calls inside Lua scripts included, EVALSHA itself counted too; the measurement\'s INFO calls excluded). "worker" = from just before the worker starts to the last settlement confirmed by Redis, so the producer\'s XADD is NOT in it; "producer + worker" adds the enqueue phase.',
          ex
            ? `One prefork fcfs run, results ignored, worker commands: ${JSON.stringify(ex.workerCommands)}; producer: ${JSON.stringify(ex.producerCommands)}.`
            : '',
          exRes
            ? `One prefork fcfs run, results stored, worker commands: ${JSON.stringify(exRes.workerCommands)} (SET + PEXPIRE: the result; LPUSH: its announcement on the enqueuing client's reply list).`
            : '',
          exDefault
            ? `One prefork run at defaults (fair, results stored), worker commands: ${JSON.stringify(exDefault.workerCommands)}.`
            : '',
          'bee-queue stores no results: "stored" for it means the job record is kept (removeOnSuccess false) and its result is published to the producer as an event (sendEvents), its way of handing a result back.',
          exBull
            ? `One BullMQ inline run, removeOnComplete, worker commands: ${JSON.stringify(exBull.workerCommands)}; producer: ${JSON.stringify(exBull.producerCommands)}.`
            : '',
        ].filter(Boolean),
      },
    ];
  },

  targets({ cases }) {
    const c = (id) => cases.find((x) => x.id === id);
    const defaults = c('prefork-fair-res-default');
    return [
      target(
        15,
        'defaults (fair, results stored) ≥ 1.2× BullMQ inline c50 (results stored)',
        ratio(defaults, c('bullmq-inline-c50-res'), 'jobsPerSec'),
        times,
        1.2,
        'atLeast',
      ),
      target(
        15,
        'defaults (fair, results stored) ≥ 1.0× bee-queue c50 (results kept)',
        ratio(defaults, c('beequeue-c50-res'), 'jobsPerSec'),
        times,
        1,
        'atLeast',
      ),
      target(
        15,
        'fcfs, prefetchMultiplier 64, results ignored ≥ 50,000 jobs/s',
        stat(c('prefork-fcfs-ign-pm64'), 'jobsPerSec'),
        int,
        50_000,
        'atLeast',
      ),
      target(
        15,
        '≤ 1.5 Redis commands per job at defaults (worker only)',
        stat(defaults, 'workerCmdsPerJob'),
        dec(2),
        1.5,
        'atMost',
      ),
      ...['fcfs', 'fair'].map((s) =>
        target(
          3,
          `drain ≥ 40,000 jobs/s, results ignored (${s}, prefetchMultiplier 64)`,
          stat(c(`prefork-${s}-ign-pm64`), 'jobsPerSec'),
          int,
          40_000,
          'atLeast',
        ),
      ),
      target(
        3,
        'drain ≥ 40,000 jobs/s, results ignored (fcfs, prefetchMultiplier 4)',
        stat(c('prefork-fcfs-ign-pm4'), 'jobsPerSec'),
        int,
        40_000,
        'atLeast',
      ),
      ...['fcfs', 'fair'].map((s) =>
        target(
          3,
          `drain ≥ 20,000 jobs/s, results stored (${s}, prefetchMultiplier 64)`,
          stat(c(`prefork-${s}-res-pm64`), 'jobsPerSec'),
          int,
          20_000,
          'atLeast',
        ),
      ),
      target(
        3,
        'drain ≥ 5× BullMQ inline processor (results ignored; fcfs pm 64 vs inline concurrency 2)',
        ratio(c('prefork-fcfs-ign-pm64'), c('bullmq-inline-c2-ign'), 'jobsPerSec'),
        times,
        5,
        'atLeast',
      ),
      target(
        3,
        'drain ≥ 5× BullMQ inline processor (results ignored; fcfs pm 64 vs inline concurrency 100)',
        ratio(c('prefork-fcfs-ign-pm64'), c('bullmq-inline-c100-ign'), 'jobsPerSec'),
        times,
        5,
        'atLeast',
      ),
      target(
        3,
        'drain ≥ 15× BullMQ sandboxed processor (results ignored; fcfs pm 64)',
        ratio(c('prefork-fcfs-ign-pm64'), c('bullmq-sandboxed-c2-ign'), 'jobsPerSec'),
        times,
        15,
        'atLeast',
      ),
      target(
        3,
        '≤ 2 Redis commands per job, results ignored (worker only; fcfs pm 64)',
        stat(c('prefork-fcfs-ign-pm64'), 'workerCmdsPerJob'),
        dec(2),
        2,
        'atMost',
      ),
      target(
        3,
        '≤ 2 Redis commands per job, results ignored (producer + worker; fcfs pm 64)',
        stat(c('prefork-fcfs-ign-pm64'), (r) => r.workerCmdsPerJob + r.producerCmdsPerJob),
        dec(2),
        2,
        'atMost',
      ),
    ];
  },
};
