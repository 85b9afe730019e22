// B1 (drain) and B2 (CPU-bound) through Redis — prefork's Worker.
// Measures: jobs/s draining `jobs` jobs that were all enqueued before the
// worker started (task noop: B1; task spin with `iterations`: B2, reported as
// wall time for the efficiency column); the bulk enqueue rate of those jobs
// (enqueueMany, batches of `batch`); Redis commands per job, for the worker
// alone and for the producer (enqueue) alone.
// Knobs ($BENCH_PARAMS): url, task (noop | spin), iterations, jobs (50,000
// no-op / 2,000 spin), strategy, processes (2), ignoreResult, prefetchMultiplier (the Worker's default),
// batch (1,000), warmup (2,000), revoked (0: how many revoked ids the
// cluster remembers while the worker drains; B7).
// Revoked ids (B7): after the enqueue, `revoked` random ids (none of them a
// job's) are written to the namespace's revoked set, as revokes remember
// them; the drain worker loads them when it registers, inside start() and
// before its clock starts (startMs reports start()'s duration), and checks
// every fetched job against them. Check: the worker remembers them all.
// Warm-up: a first Worker (same options, same process) drains `warmup` no-op
// jobs and stops, so the parent's code is JIT-warm; then the jobs are
// enqueued; then a fresh Worker starts (its children are spawned by start()).
// Clock: starts at the Worker's 'ready' event, emitted right after the
// consumer issued its first fetch (the pool's children are already up) —
// or, with `steadyFrom` (B2's steady state), at the first 10 ms poll that
// finds that many jobs done, and then counts only the jobs done after it
// (`clockJobs`); stops at the first 10 ms poll of
// worker.stats().consumer.succeeded that reaches `jobs` (no work added per
// job). Commands: INFO commandstats deltas from before start() to after
// stop() (so every settlement is confirmed; registration and shutdown add a
// constant handful), INFO calls excluded.
// Also reported: the parent's CPU time per job (process.cpuUsage) from
// start() to the last completion. Check: the children's own tallies (count
// and sum of arguments, written when they exit), the worker's count, and an
// empty queue afterwards (broker counts: waiting, reserved, dead all 0).
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Worker } from 'prefork';
import { Keys } from '../dist/broker/redis/keys.js';
import { params, report } from './lib/child.mjs';
import { commandCounts, commandDelta, connect, pollUntil, quietLogger } from './lib/redis.mjs';
import { readTally, tallyDir } from './lib/tally.mjs';

const p = params();
const {
  url,
  task = 'noop',
  jobs,
  strategy = 'fair',
  processes = 2,
  ignoreResult = true,
  prefetchMultiplier,
  events = true,
  batch = 1000,
  warmup = 2000,
  iterations = 0,
  revoked = 0,
  steadyFrom = 0,
} = p;
const app = fileURLToPath(new URL('./fixtures/prefork-tasks.mjs', import.meta.url));
const logger = quietLogger();
const namespace = 'bench';
const redis = connect(url);
const client = new Client({ broker: url, namespace, logger });

function newWorker(dir) {
  return new Worker({
    app,
    broker: url,
    namespace,
    concurrency: processes,
    strategy,
    // Absent: the Worker's own default.
    ...(prefetchMultiplier === undefined ? {} : { prefetchMultiplier }),
    events,
    logger,
    pool: { env: { BENCH_TALLY_DIR: dir } },
  });
}

async function enqueueAll(n, name, argOf) {
  const t = performance.now();
  for (let i = 0; i < n; i += batch) {
    const items = [];
    for (let j = i; j < Math.min(n, i + batch); j++) items.push({ name, args: [argOf(j)], options: { ignoreResult } });
    await client.enqueueMany(items);
  }
  return performance.now() - t;
}

// Warm-up worker.
const warmDir = tallyDir();
await enqueueAll(warmup, 'noop', (i) => i);
const warm = newWorker(warmDir);
await warm.start();
await pollUntil(() => warm.stats().consumer.succeeded >= warmup);
await warm.stop();
readTally(warmDir);

// Enqueue (producer commands counted alone).
const c0 = await commandCounts(redis);
const argOf = task === 'noop' ? (i) => i : () => iterations;
const enqueueMs = await enqueueAll(jobs, task, argOf);
const c1 = await commandCounts(redis);

// Remembered revokes (B7): at the server's time, so none has expired.
if (revoked > 0) {
  const [sec] = await redis.time();
  const at = Number(sec) * 1000;
  const key = new Keys(namespace).revoked;
  for (let i = 0; i < revoked; i += 10_000) {
    const args = [];
    for (let j = i; j < Math.min(revoked, i + 10_000); j++) args.push(at, randomUUID());
    await redis.zadd(key, ...args);
  }
}

// Drain.
const dir = tallyDir();
const worker = newWorker(dir);
let t0 = 0;
worker.once('ready', () => (t0 = performance.now()));
const c2 = await commandCounts(redis);
const cpu0 = process.cpuUsage();
const s0 = performance.now();
await worker.start();
const startMs = performance.now() - s0;
// Steady state: the clock starts once `steadyFrom` jobs are done, and counts the jobs done after that poll.
let clockJobs = jobs;
if (steadyFrom > 0) {
  let done = 0;
  t0 = await pollUntil(() => (done = worker.stats().consumer.succeeded) >= steadyFrom, 10);
  clockJobs = jobs - done;
}
const t1 = await pollUntil(() => worker.stats().consumer.succeeded >= jobs, 10);
const cpu = process.cpuUsage(cpu0);
const succeeded = worker.stats().consumer.succeeded;
const revokedKnown = worker.stats().revoked;
// Snapshot after stop(): every settlement is then confirmed (stats().unacked
// does not count the batch on the wire); start/stop add a constant few commands.
await worker.stop();
const c3 = await commandCounts(redis);
const [left] = await client.broker.counts(['default']);
const t = readTally(dir);
await client.close();
redis.disconnect();

const workerCmds = commandDelta(c2, c3);
const producerCmds = commandDelta(c0, c1);
const expectedSum = task === 'noop' ? (jobs * (jobs - 1)) / 2 : jobs;
const ok =
  t.count === jobs &&
  t.sum === expectedSum &&
  succeeded === jobs &&
  left.waiting === 0 &&
  left.reserved === 0 &&
  left.dead === 0 &&
  revokedKnown === revoked;
report({
  jobsPerSec: (clockJobs / (t1 - t0)) * 1000,
  wallMs: t1 - t0,
  clockJobs,
  enqueuePerSec: (jobs / enqueueMs) * 1000,
  parentCpuUsPerJob: (cpu.user + cpu.system) / jobs,
  startMs,
  revoked: revokedKnown,
  workerCmdsPerJob: workerCmds.total / jobs,
  producerCmdsPerJob: producerCmds.total / jobs,
  workerCommands: workerCmds.byCommand,
  producerCommands: producerCmds.byCommand,
  count: t.count,
  ok,
  check: `children ran ${t.count}/${jobs} (sum ${t.sum === expectedSum ? 'right' : 'WRONG'}), worker counted ${succeeded}, queue after: waiting ${left.waiting}, reserved ${left.reserved}, dead ${left.dead}; revoked ids remembered ${revokedKnown}/${revoked}`,
});
