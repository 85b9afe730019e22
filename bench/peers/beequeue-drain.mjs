// B1 (drain) through Redis — the bee-queue peer.
// Measures: jobs/s draining `jobs` no-op jobs that were all saved before the
// worker started (job data { x }, returns x), and Redis commands per job
// (worker alone, producer alone).
// Knobs ($BENCH_PARAMS): url, concurrency (50), jobs, ignoreResult (true →
// removeOnSuccess: true and no events; false → the job is kept in its
// succeeded set and its result published to the producer as a 'succeeded'
// event, bee-queue's way of handing a result back: it stores none), batch
// (1,000 per saveAll), warmup (2,000).
// Warm-up: a first worker Queue processes `warmup` jobs and closes; then the
// jobs are saved; then a fresh worker Queue is created. Clock: starts when
// process() is called, stops at the first 10 ms poll where the worker's
// 'succeeded' count reaches `jobs`. Commands: INFO commandstats deltas from
// process() to the last completion, INFO calls excluded. Check: distinct job
// ids succeeded === jobs, the results add up, and nothing waits, runs or
// failed afterwards (checkHealth).
import BeeQueue from 'bee-queue';
import { params } from '../lib/child.mjs';
import { reportPeerDrain } from '../lib/peer-drain.mjs';
import { commandCounts, connect, pollUntil } from '../lib/redis.mjs';

const p = params();
const { url, concurrency = 50, jobs, ignoreResult = true, batch = 1000, warmup = 2000 } = p;
const { hostname, port } = new URL(url);
const settings = {
  redis: { host: hostname, port: Number(port) },
  removeOnSuccess: ignoreResult,
  sendEvents: !ignoreResult,
  activateDelayedJobs: false,
};
const redis = connect(url);
const producer = new BeeQueue('bench', { ...settings, isWorker: false, getEvents: !ignoreResult, storeJobs: false });

async function saveAll(n) {
  const t = performance.now();
  for (let i = 0; i < n; i += batch) {
    const items = [];
    for (let j = i; j < Math.min(n, i + batch); j++) items.push(producer.createJob({ x: j }));
    const errors = await producer.saveAll(items);
    if (errors.size > 0) throw new Error(`saveAll failed for ${errors.size} jobs: ${[...errors.values()][0]}`);
  }
  return performance.now() - t;
}

function newWorker() {
  const q = new BeeQueue('bench', { ...settings, isWorker: true, getEvents: false });
  const seen = { count: 0, sum: 0, ids: new Set(), failed: 0 };
  q.on('succeeded', (job, result) => {
    seen.count++;
    seen.sum += result;
    seen.ids.add(job.id);
  });
  q.on('failed', () => seen.failed++);
  return { q, seen };
}

const handler = async (job) => job.data.x;

// Warm-up.
await producer.ready();
await saveAll(warmup);
{
  const { q, seen } = newWorker();
  await q.ready();
  q.process(concurrency, handler);
  await pollUntil(() => seen.count >= warmup);
  await q.close();
}

const c0 = await commandCounts(redis);
const enqueueMs = await saveAll(jobs);
const c1 = await commandCounts(redis);

const { q, seen } = newWorker();
await q.ready();
const c2 = await commandCounts(redis);
const t0 = performance.now();
q.process(concurrency, handler);
const t1 = await pollUntil(() => seen.count >= jobs || seen.failed > 0, 10);
const c3 = await commandCounts(redis);
const health = await q.checkHealth();
await q.close();
await producer.close();
redis.disconnect();

reportPeerDrain({
  jobs,
  t0,
  t1,
  enqueueMs,
  c0,
  c1,
  c2,
  c3,
  seen,
  expectedSum: (jobs * (jobs - 1)) / 2,
  counts: health,
  after: health,
  verb: 'succeeded',
});
