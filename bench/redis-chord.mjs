// B10 — a chord of `members` no-op jobs through Redis: prefork's Worker.
// Measures: the time from the enqueue call to the callback's result in the
// client (handle.result()), and Redis commands per member (INFO commandstats
// deltas over that window: the enqueue script, every member's fetch, settle
// and result, the callback's, the announcement and the client's reads).
// Knobs ($BENCH_PARAMS): url, members (10,000), processes (2), strategy
// (fair), warmup and warmupChords (warmupChords chords of warmup members
// first, so the parent's code is JIT-warm: 1 of 500 by default).
// The worker is started and idle before the clock starts.
// Check: the callback got every member's result, in order ([members, sum]),
// the children ran members + 1 jobs, and nothing is left in the queue.
import { fileURLToPath } from 'node:url';
import { chord, Client, task, Worker } from 'prefork';
import { params, report } from './lib/child.mjs';
import { commandCounts, commandDelta, connect, quietLogger } from './lib/redis.mjs';
import { readTally, tallyDir } from './lib/tally.mjs';

const { url, members = 10_000, processes = 2, strategy = 'fair', warmup = 500, warmupChords = 1 } = params();
const app = fileURLToPath(new URL('./fixtures/prefork-tasks.mjs', import.meta.url));
const logger = quietLogger();
const namespace = 'bench';
const redis = connect(url);
const client = new Client({ broker: url, namespace, logger });
const dir = tallyDir();
const worker = new Worker({
  app,
  broker: url,
  namespace,
  concurrency: processes,
  strategy,
  logger,
  pool: { env: { BENCH_TALLY_DIR: dir } },
});
await worker.start();

const chordOf = (n) =>
  chord(
    Array.from({ length: n }, (_, i) => task('noop', [i])),
    task('total'),
  );
const expected = (n) => [n, (n * (n - 1)) / 2];

let warm;
for (let i = 0; i < warmupChords; i++) warm = await (await client.enqueue(chordOf(warmup))).result({ timeout: '5m' });

const c0 = await commandCounts(redis);
const t0 = performance.now();
const handle = await client.enqueue(chordOf(members));
const enqueuedMs = performance.now() - t0;
const value = await handle.result({ timeout: '10m' });
const wallMs = performance.now() - t0;
const c1 = await commandCounts(redis);

await worker.stop();
const [left] = await client.broker.counts(['default']);
const t = readTally(dir);
await client.close();
redis.disconnect();

const cmds = commandDelta(c0, c1);
const ran = warmupChords * warmup + members;
const ok =
  JSON.stringify(value) === JSON.stringify(expected(members)) &&
  JSON.stringify(warm) === JSON.stringify(expected(warmup)) &&
  t.count === ran &&
  left.waiting === 0 &&
  left.reserved === 0 &&
  left.dead === 0;
report({
  wallMs,
  enqueueMs: enqueuedMs,
  membersPerSec: (members / wallMs) * 1000,
  cmdsPerMember: cmds.total / members,
  commands: cmds.byCommand,
  ok,
  check: `callback got ${JSON.stringify(value)} (want ${JSON.stringify(expected(members))}), children ran ${t.count}/${ran} members, queue after: waiting ${left.waiting}, reserved ${left.reserved}, dead ${left.dead}`,
});
