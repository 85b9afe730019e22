// B8 — Redis commands per second of an idle node with a schedule of 100
// entries, each every hour (the leader lease rides on its heartbeats; one
// timer sleeps until the earliest tick, nothing polls).
// Measures: commands Redis ran (INFO commandstats delta, Lua inner commands
// included, the INFO calls of the measurement excluded) while the started
// Worker sits idle for `seconds`. A window that crosses a whole hour of the
// Redis clock includes the 100 ticks' one claim.
// Knobs ($BENCH_PARAMS): url, seconds (10), entries (100), settleMs (1,000 after start before the window opens).
// Clock: the window is the wall time between the two INFO snapshots.
import { fileURLToPath } from 'node:url';
import { defineSchedule, Worker } from 'prefork';
import { params, report } from './lib/child.mjs';
import { commandCounts, commandDelta, connect, quietLogger } from './lib/redis.mjs';

const { url, seconds = 10, entries = 100, settleMs = 1000 } = params();
const app = fileURLToPath(new URL('./fixtures/schedule-tasks.mjs', import.meta.url));
const schedule = defineSchedule(
  Object.fromEntries(Array.from({ length: entries }, (_, i) => [`hourly-${i}`, { task: 'noop', every: '1h' }])),
);
const worker = new Worker({
  app,
  broker: url,
  namespace: 'bench-schedule-idle',
  concurrency: 2,
  schedule,
  logger: quietLogger(),
});
await worker.start();
await new Promise((r) => setTimeout(r, settleMs));
const redis = connect(url);
const before = await commandCounts(redis);
const t0 = performance.now();
await new Promise((r) => setTimeout(r, seconds * 1000));
const after = await commandCounts(redis);
const windowS = (performance.now() - t0) / 1000;
await worker.stop();
redis.disconnect();
const d = commandDelta(before, after);
report({
  perSec: d.total / windowS,
  windowS,
  commands: d.byCommand,
  ok: true,
  check: `${d.total} commands in ${windowS.toFixed(1)} s: ${JSON.stringify(d.byCommand)}`,
});
