// B1 (drain) and B2 (CPU-bound) through Redis — the BullMQ peer.
// Measures: jobs/s draining `jobs` jobs that were all added before the worker
// started (task noop: job data { x }, returns x; task spin: { n }, the same
// calibrated busy loop), the bulk enqueue rate (addBulk in batches of
// `batch`), and Redis commands per job (worker alone, producer alone).
// Knobs ($BENCH_PARAMS): url, mode (sandboxed: a processor FILE run in
// BullMQ's child processes, useWorkerThreads false | inline: a function in
// this process), concurrency (2; try 100 inline), task, iterations, jobs,
// ignoreResult (true → removeOnComplete: true; false → results kept in Redis),
// batch (1,000), warmup (2,000).
// Warm-up: a first Worker with the same options processes `warmup` jobs and
// closes; then the jobs are added; then a fresh Worker is created with
// autorun: false. Clock: starts when worker.run() is called (sandboxed
// children are forked on demand, inside the clock — that is how BullMQ
// starts) — or, with `steadyFrom` (B2's steady state), at the first 10 ms
// poll that finds that many completed, counting only the jobs completed
// after it — and stops at the first 10 ms poll where the worker's
// 'completed' count reaches `jobs`. Commands: INFO commandstats deltas
// from run() to the last completion, INFO calls excluded. Check: distinct job ids completed ===
// jobs, the results add up, and the queue has nothing waiting, active or failed.
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { params } from '../lib/child.mjs';
import { reportPeerDrain } from '../lib/peer-drain.mjs';
import { commandCounts, connect, pollUntil } from '../lib/redis.mjs';
import { spin } from '../lib/spin.mjs';

const p = params();
const {
  url,
  mode = 'inline',
  concurrency = 2,
  task = 'noop',
  jobs,
  ignoreResult = true,
  batch = 1000,
  warmup = 2000,
  iterations = 0,
  steadyFrom = 0,
} = p;
const { hostname, port } = new URL(url);
const connection = { host: hostname, port: Number(port), maxRetriesPerRequest: null };
const processorFile = fileURLToPath(new URL('./bullmq-processor.mjs', import.meta.url));
const inline = async (job) => (job.data.n === undefined ? job.data.x : spin(job.data.n));
const redis = connect(url);
const queue = new Queue('bench', { connection });
const jobOpts = ignoreResult ? { removeOnComplete: true } : {};
const dataOf = task === 'noop' ? (i) => ({ x: i }) : () => ({ n: iterations });

async function addAll(n, data) {
  const t = performance.now();
  for (let i = 0; i < n; i += batch) {
    const items = [];
    for (let j = i; j < Math.min(n, i + batch); j++) items.push({ name: task, data: data(j), opts: jobOpts });
    await queue.addBulk(items);
  }
  return performance.now() - t;
}

function newWorker() {
  const w = new Worker('bench', mode === 'sandboxed' ? processorFile : inline, {
    connection,
    concurrency,
    autorun: false,
    useWorkerThreads: false,
  });
  const seen = { count: 0, sum: 0, ids: new Set(), failed: 0 };
  w.on('completed', (job, result) => {
    seen.count++;
    seen.sum += result;
    seen.ids.add(job.id);
  });
  w.on('failed', () => seen.failed++);
  return { w, seen };
}

// Warm-up.
await addAll(warmup, (i) => ({ x: i }));
{
  const { w, seen } = newWorker();
  void w.run();
  await pollUntil(() => seen.count >= warmup);
  await w.close();
}
await queue.clean(0, 0, 'completed');

const c0 = await commandCounts(redis);
const enqueueMs = await addAll(jobs, dataOf);
const c1 = await commandCounts(redis);

const { w, seen } = newWorker();
const c2 = await commandCounts(redis);
let t0 = performance.now();
const running = w.run();
let clockJobs = jobs;
if (steadyFrom > 0) {
  let done = 0;
  t0 = await pollUntil(() => (done = seen.count) >= steadyFrom || seen.failed > 0, 10);
  clockJobs = jobs - done;
}
const t1 = await pollUntil(() => seen.count >= jobs || seen.failed > 0, 10);
const c3 = await commandCounts(redis);
await w.close();
await running;
const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'failed', 'completed');
await queue.close();
redis.disconnect();

reportPeerDrain({
  jobs,
  clockJobs,
  t0,
  t1,
  enqueueMs,
  c0,
  c1,
  c2,
  c3,
  seen,
  expectedSum: task === 'noop' ? (jobs * (jobs - 1)) / 2 : jobs * spin(iterations),
  counts: { waiting: counts.wait, active: counts.active, failed: counts.failed },
  after: counts,
  verb: 'completed',
});
