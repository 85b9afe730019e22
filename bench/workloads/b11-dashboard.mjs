// B11 — dashboard page data with 1,000,000 waiting jobs (scenario: dashboard-page.mjs).
import { cell, count, dec, good, runsCell, stat, target } from '../lib/report.mjs';

const JOBS = 1_000_000;

export default {
  id: 'B11',
  kind: 'redis',
  title: `B11 — dashboard page data: ${count(JOBS)} jobs waiting in one queue, one live node`,

  cases({ url, quick }) {
    const jobs = quick ? 20_000 : JOBS;
    return [
      {
        id: 'dashboard',
        label: `prefork dashboard, ${count(jobs)} waiting`,
        redis: true,
        file: 'dashboard-page.mjs',
        params: { url, jobs, requests: quick ? 50 : 200 },
        timeoutMs: 600_000,
      },
    ];
  },

  tables({ cases }) {
    const x = cases[0];
    const ms = dec(1);
    const row = (what, key) => [
      what,
      cell(
        stat(x, (r) => r[key].p50),
        ms,
      ),
      cell(
        stat(x, (r) => r[key].p95),
        ms,
      ),
      cell(
        stat(x, (r) => r[key].max),
        ms,
      ),
    ];
    return [
      {
        header: ['request', 'p50 ms', 'p95 ms', 'max ms'],
        rows: [
          row('page data: overview + first page of 25 waiting jobs, together', 'pageData'),
          row('GET /api/overview (the last snapshot and the charts’ history)', 'overview'),
          row('GET /api/jobs, first page of 25 waiting jobs', 'firstPage'),
          row('GET /api/jobs, page 41 (through the cursor)', 'deepPage'),
          row('the dashboard’s read per sample (queue counts + the node’s stats)', 'sample'),
        ],
        notes: [
          `${count(x.params.jobs)} no-op jobs enqueued to \`default\` first (${cell(stat(x, 'enqueueS'), dec(1))} s); a Worker with 2 processes consumes another queue, so the dashboard asks it for its stats; the dashboard samples every 250 ms all along.`,
          `Clock: each request over loopback HTTP from fetch() to its body read; ${x.params.requests} of each per run (after 20 of warm-up), p50/p95/max per run, then the median (min–max) over runs. Runs: ${runsCell(x)}.`,
          ...good(x)
            .map((r) => `Check: ${r.check}.`)
            .slice(0, 1),
        ],
      },
    ];
  },

  targets({ cases }) {
    return [
      target(
        12,
        `dashboard page data with ${count(JOBS)} waiting ≤ 50 ms (p95 of overview + first page)`,
        stat(cases[0], (r) => r.pageData.p95),
        dec(1),
        50,
        'atMost',
        ' ms',
      ),
    ];
  },
};
