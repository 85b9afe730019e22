// B1 (enqueue) — producer rate into Redis, no worker running.
// Measures: jobs/s enqueued one by one (each call awaited before the next) or
// in bulk (batches of `batch`, each awaited), and Redis commands per job.
// Knobs ($BENCH_PARAMS): url, impl (prefork: Client.enqueue / enqueueMany |
// bullmq: Queue.add / addBulk, removeOnComplete), mode (single | bulk), jobs,
// batch (1,000), warmup (1,000 jobs the same way first).
// Clock: from the first call to the last resolved promise. Check: the queue
// holds warmup + jobs entries afterwards.
import { params, report } from './lib/child.mjs';
import { commandCounts, commandDelta, connect, quietLogger } from './lib/redis.mjs';

const { url, impl, mode, jobs, batch = 1000, warmup = 1000 } = params();
const redis = connect(url);
let one;
let many;
let waiting;
let close;
if (impl === 'prefork') {
  const { Client } = await import('prefork');
  const client = new Client({ broker: url, namespace: 'bench', logger: quietLogger() });
  one = (i) => client.enqueue('noop', [i], { ignoreResult: true });
  many = (items) =>
    client.enqueueMany(items.map((i) => ({ name: 'noop', args: [i], options: { ignoreResult: true } })));
  waiting = async () => (await client.broker.counts(['default']))[0].waiting;
  close = () => client.close();
} else {
  const { Queue } = await import('bullmq');
  const { hostname, port } = new URL(url);
  const queue = new Queue('bench', { connection: { host: hostname, port: Number(port), maxRetriesPerRequest: null } });
  one = (i) => queue.add('noop', { x: i }, { removeOnComplete: true });
  many = (items) =>
    queue.addBulk(items.map((i) => ({ name: 'noop', data: { x: i }, opts: { removeOnComplete: true } })));
  waiting = () => queue.getWaitingCount();
  close = () => queue.close();
}

async function enqueue(n) {
  if (mode === 'single') {
    for (let i = 0; i < n; i++) await one(i);
    return;
  }
  for (let i = 0; i < n; i += batch) await many(Array.from({ length: Math.min(batch, n - i) }, (_, j) => i + j));
}

await enqueue(warmup);
const c0 = await commandCounts(redis);
const t0 = performance.now();
await enqueue(jobs);
const ms = performance.now() - t0;
const c1 = await commandCounts(redis);
const n = await waiting();
await close();
redis.disconnect();
const d = commandDelta(c0, c1);
report({
  jobsPerSec: (jobs / ms) * 1000,
  cmdsPerJob: d.total / jobs,
  commands: d.byCommand,
  count: n - warmup,
  ok: n === warmup + jobs,
  check: `${n} waiting (expected ${warmup + jobs})`,
});
