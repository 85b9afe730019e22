// B11 — dashboard page data with a long queue.
// Measures: the latency of what the page loads (GET /api/overview: the last
// snapshot and the charts' history; GET /api/jobs: the first page of 25
// waiting jobs; both at once as the page asks for them), of a page 40 pages
// deep (through the cursor), and the dashboard's own read per sample (queue
// counts + the nodes' stats, `sampledInMs`), with `jobs` waiting in
// `default` and one live node (2 processes, consuming another queue).
// Knobs ($BENCH_PARAMS): url, jobs (1,000,000), requests (200 per route),
// batch (1,000 per enqueue call), sampleInterval (250 ms: sampling runs all
// along, as it does for a watched page).
// Clock: each request from fetch() to its body read, over loopback HTTP.
// Check: the overview counts all `jobs` waiting, the first page has 25 jobs
// and a cursor, the deep page has 25 jobs none of which was seen before.
import { fileURLToPath } from 'node:url';
import { Client, Worker } from 'prefork';
import { createBroker } from '../dist/broker/index.js';
import { startDashboard } from '../dist/dashboard/dashboard.js';
import { params, report } from './lib/child.mjs';
import { quietLogger } from './lib/redis.mjs';
import { percentile } from './lib/stats.mjs';

const { url, jobs = 1_000_000, requests = 200, batch = 1000, sampleInterval = 250 } = params();
const logger = quietLogger();
const namespace = 'bench';
const app = fileURLToPath(new URL('./fixtures/prefork-tasks.mjs', import.meta.url));

const client = new Client({ broker: url, namespace, logger });
const t0 = performance.now();
const inFlight = 4;
for (let sent = 0; sent < jobs;) {
  const calls = [];
  for (let k = 0; k < inFlight && sent < jobs; k++) {
    const n = Math.min(batch, jobs - sent);
    const base = sent;
    calls.push(
      client.enqueueMany(
        Array.from({ length: n }, (_, i) => ({ name: 'noop', args: [base + i], options: { ignoreResult: true } })),
      ),
    );
    sent += n;
  }
  await Promise.all(calls);
}
const enqueueS = (performance.now() - t0) / 1000;

const worker = new Worker({ app, broker: url, namespace, concurrency: 2, queues: 'other', logger });
await worker.start();
const broker = createBroker(url, { namespace, logger });
const dashboard = await startDashboard(broker, client, { port: 0, sampleInterval, logger });
const base = dashboard.url;

async function get(path) {
  const t = performance.now();
  const res = await fetch(`${base}${path}`);
  const body = await res.json();
  return { ms: performance.now() - t, status: res.status, body };
}

// Warm-up: connections, JIT, Redis script cache.
for (let i = 0; i < 20; i++) {
  await get('/api/overview');
  await get('/api/jobs?queue=default&state=waiting&limit=25');
}

const overview = [];
const firstPage = [];
const pageData = [];
const deepPage = [];
let first;
for (let i = 0; i < requests; i++) {
  const o = await get('/api/overview');
  overview.push(o.ms);
  const p = await get('/api/jobs?queue=default&state=waiting&limit=25');
  firstPage.push(p.ms);
  first ??= { o, p };
  const t = performance.now();
  await Promise.all([get('/api/overview'), get('/api/jobs?queue=default&state=waiting&limit=25')]);
  pageData.push(performance.now() - t);
}

// 40 pages in, then that page again and again.
let cursor;
const seen = new Set();
for (let i = 0; i < 40; i++) {
  const p = await get(
    `/api/jobs?queue=default&state=waiting&limit=25${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
  );
  for (const j of p.body.jobs) seen.add(j.id);
  cursor = p.body.next;
}
let deep;
for (let i = 0; i < requests; i++) {
  deep = await get(`/api/jobs?queue=default&state=waiting&limit=25&cursor=${encodeURIComponent(cursor)}`);
  deepPage.push(deep.ms);
}
const samples = [];
for (let i = 0; i < 20; i++) {
  samples.push((await get('/api/overview')).body.snapshot.sampledInMs);
  await new Promise((r) => setTimeout(r, sampleInterval));
}

await dashboard.close();
await broker.close();
await worker.stop();
await client.close();

const counted = first.o.body.snapshot.queues.find((q) => q.queue === 'default')?.waiting;
const nodes = first.o.body.snapshot.nodes.filter((n) => n.stats !== undefined).length;
const deepFresh = deep.body.jobs.length === 25 && deep.body.jobs.every((j) => !seen.has(j.id));
const ok =
  counted === jobs && nodes === 1 && first.p.body.jobs.length === 25 && first.p.body.next !== null && deepFresh;
const stats = (xs) => ({ p50: percentile(xs, 50), p95: percentile(xs, 95), max: Math.max(...xs) });
report({
  jobs,
  enqueueS,
  overview: stats(overview),
  firstPage: stats(firstPage),
  pageData: stats(pageData),
  deepPage: stats(deepPage),
  sample: stats(samples),
  ok,
  check: `overview counts ${counted} waiting of ${jobs}, ${nodes} node(s) with stats; first page ${first.p.body.jobs.length} jobs, next ${first.p.body.next === null ? 'none' : 'given'}; page 41: ${deep.body.jobs.length} jobs, ${deepFresh ? 'none seen before' : 'SOME SEEN BEFORE'}`,
});
