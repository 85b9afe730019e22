// B9 — rate-limited drain: `nodes` worker nodes share one cluster-wide rate
// limit (task `limited`, `rate`, default 1000/s) over a backlog enqueued
// before they start, larger than the window can take.
// Measures: the achieved rate of starts over a `seconds`-long window (after
// `warmupSeconds` from the nodes' start), as completions of the no-op
// counted by the nodes (polled once a second: the busiest and quietest
// second are reported too); Redis commands per job over the window (INFO
// commandstats deltas, Lua inner commands included, the measurement's INFO
// calls excluded: fetches, bucket calls, deferrals and promotions).
// Knobs ($BENCH_PARAMS): url, nodes (2), processes (2 per node), rate
// ('1000/s'), seconds (30), warmupSeconds (3), ignoreResult (true), batch (1,000).
// The nodes are Worker instances in this one process, each with its own
// broker connections and children, at default options.
// Check: after the window the nodes drain the rest of the backlog; every job
// ran exactly once (the children's tallies: count and sum), none was retried
// or dead-lettered (a deferral spends no retry), and the queue is empty.
import { fileURLToPath } from 'node:url';
import { Client, Worker } from 'prefork';
import { params, report } from './lib/child.mjs';
import { commandCounts, commandDelta, connect, pollUntil, quietLogger } from './lib/redis.mjs';
import { readTally, tallyDir } from './lib/tally.mjs';

const {
  url,
  nodes = 2,
  processes = 2,
  rate = '1000/s',
  seconds = 30,
  warmupSeconds = 3,
  ignoreResult = true,
  batch = 1000,
} = params();
const perSecond = Number(/^(\d+)\/s$/.exec(rate)?.[1]);
if (!(perSecond > 0)) throw new Error(`rate must be N/s, got ${rate}`);
// A backlog the window cannot drain: the limit binds throughout.
const jobs = Math.ceil(perSecond * (warmupSeconds + seconds) * 1.1);
const app = fileURLToPath(new URL('./fixtures/prefork-limited-tasks.mjs', import.meta.url));
const logger = quietLogger();
const namespace = 'bench';
const redis = connect(url);
const client = new Client({ broker: url, namespace, logger });

for (let i = 0; i < jobs; i += batch) {
  const items = [];
  for (let j = i; j < Math.min(jobs, i + batch); j++)
    items.push({ name: 'limited', args: [j], options: { ignoreResult } });
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
      name: `b7-${i}`,
      concurrency: processes,
      logger,
      pool: { env: { BENCH_TALLY_DIR: dir, BENCH_RATE_LIMIT: rate } },
    }),
);
const sum = (f) => workers.reduce((n, w) => n + f(w.stats().consumer), 0);
const succeeded = () => sum((c) => c.succeeded);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

await Promise.all(workers.map((w) => w.start()));
await sleep(warmupSeconds * 1000);
const c0 = await commandCounts(redis);
const n0 = succeeded();
const t0 = performance.now();
const perSecondCounts = [];
let last = n0;
for (let s = 1; s <= seconds; s++) {
  await sleep(t0 + s * 1000 - performance.now());
  const n = succeeded();
  perSecondCounts.push(n - last);
  last = n;
}
const t1 = performance.now();
const n1 = last;
const c1 = await commandCounts(redis);

// The rest of the backlog, for the check.
await pollUntil(() => succeeded() >= jobs, 50, (jobs / perSecond) * 1000 + 120_000);
await Promise.all(workers.map((w) => w.stop()));
const [left] = await client.broker.counts(['default']);
const t = readTally(dir);
const retried = sum((c) => c.retried);
const deferred = sum((c) => c.deferred);
await client.close();
redis.disconnect();

const window = commandDelta(c0, c1);
const done = n1 - n0;
const achieved = (done / (t1 - t0)) * 1000;
const expectedSum = (jobs * (jobs - 1)) / 2;
const ok =
  t.count === jobs &&
  t.sum === expectedSum &&
  succeeded() === jobs &&
  retried === 0 &&
  left.waiting === 0 &&
  left.delayed === 0 &&
  left.reserved === 0 &&
  left.dead === 0;
report({
  achievedPerSec: achieved,
  ofTarget: achieved / perSecond,
  busiestSecond: Math.max(...perSecondCounts),
  quietestSecond: Math.min(...perSecondCounts),
  cmdsPerJob: window.total / done,
  windowCommands: window.byCommand,
  jobs,
  deferred,
  ok,
  check: `children ran ${t.count}/${jobs} (sum ${t.sum === expectedSum ? 'right' : 'WRONG'}), nodes counted ${succeeded()}, retried ${retried}; queue after: waiting ${left.waiting}, delayed ${left.delayed}, reserved ${left.reserved}, dead ${left.dead}`,
});
