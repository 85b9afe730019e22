// B10 — a chord of 10,000 no-op members through Redis, prefork against
// Celery's chord on the same Redis (scenarios: redis-chord.mjs,
// peers/celery-chord.mjs, which runs peers/celery_chord.py).
import { cell, count, dec, good, ratio, runsCell, stat, target, times } from '../lib/report.mjs';

const MEMBERS = 10_000;

export default {
  id: 'B10',
  kind: 'redis',
  title: `B10 — a chord of no-op members (${count(MEMBERS)}; 1,000 in quick mode): enqueue to the callback's result, 2 processes`,

  cases({ quick, url }) {
    const members = quick ? 1_000 : MEMBERS;
    // Three warm-up chords of 2,000 (B1 warms up on 2,000 jobs): the enqueue's and the drain's code are JIT-compiled
    // by then, as in a worker that has run chords before; one of 500 left them half cold (the second prefork row).
    const params = { url, members, processes: 2, warmup: quick ? 200 : 2_000, warmupChords: 3 };
    return [
      {
        id: 'prefork',
        label: 'prefork chord (defaults: fair, results stored)',
        redis: true,
        file: 'redis-chord.mjs',
        params,
      },
      {
        id: 'prefork-cold',
        label: 'prefork chord, after one warm-up chord of 500 only',
        redis: true,
        file: 'redis-chord.mjs',
        params: { ...params, warmup: quick ? 50 : 500, warmupChords: 1 },
      },
      {
        id: 'celery',
        label: 'Celery chord (Debian python3-celery, prefork pool, Redis broker and backend)',
        peer: true,
        redis: true,
        file: 'peers/celery-chord.mjs',
        params,
        timeoutMs: 900_000,
      },
      {
        id: 'celery-poll',
        label: "Celery chord, the callback's result read from its key every 5 ms (no result consumer in the caller)",
        peer: true,
        redis: true,
        file: 'peers/celery-chord.mjs',
        params: { ...params, wait: 'poll' },
        timeoutMs: 900_000,
      },
    ];
  },

  tables({ cases }) {
    const c = (id) => cases.find((x) => x.id === id);
    const rows = cases.map((x) => [
      x.label,
      cell(stat(x, 'wallMs')),
      cell(stat(x, 'membersPerSec')),
      x.peer ? '' : cell(ratio(c('celery'), x, 'wallMs'), times),
      x.peer ? '' : cell(ratio(c('celery-poll'), x, 'wallMs'), times),
      cell(stat(x, 'cmdsPerMember'), dec(2)),
      runsCell(x),
    ]);
    const top = (x) => {
      const r = good(x)[0];
      if (!r) return 'n/a';
      return Object.entries(r.commands)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([name, n]) => `${name} ${(n / x.params.members).toFixed(2)}`)
        .join(', ');
    };
    return [
      {
        header: [
          'chord',
          'enqueue → callback result, ms',
          'members/s',
          'Celery ÷ prefork (same round)',
          'Celery polled ÷ prefork (same round)',
          'Redis cmds/member',
          'runs',
        ],
        rows,
        notes: [
          `One chord of ${count(cases[0].params.members)} members that return their argument, and a callback that gets their results (in member order) and returns [count, sum]; the clock runs from the enqueue call to the callback's result in the caller, with the worker (2 child processes) started and idle before it; ${cases[0].params.warmupChords} warm-up chords of ${count(cases[0].params.warmup)} run first, for Celery too (the second prefork row: one of ${count(cases[1].params.warmup)}, as this workload did before 2026-11-25). Redis commands: INFO commandstats over that window (commands inside scripts count), divided by the members.`,
          `Commands per member, the largest (first good run): prefork ${top(c('prefork'))}; Celery ${top(c('celery'))}; Celery polled ${top(c('celery-poll'))} (the polls' own GETs left out).`,
          "Celery's two rows differ only in how the caller waits: AsyncResult.get(), as an application does (its result consumer subscribed to every member's result when the chord was sent, and reads them all on the way), or a GET of the callback's result key every 5 ms, which times the chord itself.",
        ],
      },
    ];
  },

  targets({ cases }) {
    const c = (id) => cases.find((x) => x.id === id);
    return [
      target(
        13,
        'chord of 10,000: ≤ 3 Redis commands per member',
        stat(c('prefork'), 'cmdsPerMember'),
        dec(2),
        3,
        'atMost',
      ),
      target(
        13,
        "chord of 10,000: ≥ 10× faster than Celery's chord (AsyncResult.get())",
        ratio(c('celery'), c('prefork'), 'wallMs'),
        times,
        10,
        'atLeast',
      ),
      target(
        13,
        "chord of 10,000: ≥ 10× faster than Celery's chord (its result polled)",
        ratio(c('celery-poll'), c('prefork'), 'wallMs'),
        times,
        10,
        'atLeast',
      ),
    ];
  },
};
