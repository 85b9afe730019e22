// B6 — many nodes on one Redis: `nodes` worker nodes of one child each.
// Measures: Redis commands per job while they drain `jobs` no-op jobs
// enqueued before they start (INFO commandstats deltas, Lua inner commands
// included, the measurement's INFO calls excluded; from before the nodes
// start to every settlement confirmed, so the producer's enqueue is not in
// it and the nodes' registration is), and Redis commands per second per
// node while they then sit idle for `idleSeconds` (≥ 120 s spans the
// re-arm of every node's blocking read, 2 minutes long).
// Knobs ($BENCH_PARAMS): url, nodes (20), jobs (10,000), ignoreResult (false:
// results stored, the default), idleSeconds (125; 0: no idle window), batch (1,000).
// The nodes are Worker instances in this one process, each with its own
// broker connections and child, at default options but concurrency 1.
// Check: every job succeeded once (the nodes' counts, the children's tallies),
// and the queue is empty afterwards.
import { fileURLToPath } from 'node:url';
import { Client, Worker } from 'prefork';
import { params, report } from './lib/child.mjs';
import { commandCounts, commandDelta, connect, pollUntil, quietLogger } from './lib/redis.mjs';
import { readTally, tallyDir } from './lib/tally.mjs';

const { url, nodes = 20, jobs = 10_000, ignoreResult = false, idleSeconds = 125, batch = 1000 } = params();
const app = fileURLToPath(new URL('./fixtures/prefork-tasks.mjs', import.meta.url));
const logger = quietLogger();
const namespace = 'bench';
const redis = connect(url);
const client = new Client({ broker: url, namespace, logger });

for (let i = 0; i < jobs; i += batch) {
  const items = [];
  for (let j = i; j < Math.min(jobs, i + batch); j++)
    items.push({ name: 'noop', args: [j], options: { ignoreResult } });
  await client.enqueueMany(items);
}

const dir = tallyDir();
const workers = Array.from(
  { length: nodes },
  (_, i) =>
    new Worker({
      app,
      broker: url,
      namespace,
      name: `b6-${i}`,
      concurrency: 1,
      logger,
      pool: { env: { BENCH_TALLY_DIR: dir } },
    }),
);
const succeeded = () => workers.reduce((n, w) => n + w.stats().consumer.succeeded, 0);
const c0 = await commandCounts(redis);
const t0 = performance.now();
await Promise.all(workers.map((w) => w.start()));
const t1 = await pollUntil(() => succeeded() >= jobs, 10);
// Every settlement confirmed by Redis (the batch on the wire included).
await pollUntil(() => workers.every((w) => w.stats().unacked === 0), 10);
await new Promise((r) => setTimeout(r, 200));
const c1 = await commandCounts(redis);

// Idle: the nodes blocked on an empty queue, heartbeating.
if (idleSeconds > 0) await new Promise((r) => setTimeout(r, 2_000));
const c2 = await commandCounts(redis);
const i0 = performance.now();
await new Promise((r) => setTimeout(r, idleSeconds * 1000));
const c3 = await commandCounts(redis);
const idleS = (performance.now() - i0) / 1000;

const done = succeeded();
await Promise.all(workers.map((w) => w.stop()));
const [left] = await client.broker.counts(['default']);
const t = readTally(dir);
await client.close();
redis.disconnect();

const drain = commandDelta(c0, c1);
const idle = commandDelta(c2, c3);
const ok = done === jobs && t.count === jobs && left.waiting === 0 && left.reserved === 0 && left.dead === 0;
report({
  cmdsPerJob: drain.total / jobs,
  idlePerNodePerSec: idleSeconds > 0 ? idle.total / idleS / nodes : null,
  jobsPerSec: (jobs / (t1 - t0)) * 1000,
  drainCommands: drain.byCommand,
  idleCommands: idle.byCommand,
  idleS,
  ok,
  check: `nodes counted ${done}/${jobs}, children ran ${t.count}; queue after: waiting ${left.waiting}, reserved ${left.reserved}, dead ${left.dead}`,
});
