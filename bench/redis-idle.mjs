// B3 — Redis commands per second of an idle node.
// Measures: commands Redis ran (INFO commandstats delta, Lua inner commands
// included, the two INFO calls of the measurement excluded) while a started
// Worker with 2 processes and an empty queue sits idle for `seconds`.
// Knobs ($BENCH_PARAMS): url, seconds (10), settleMs (1,000 after start before the window opens).
// Clock: the window is the wall time between the two INFO snapshots.
import { fileURLToPath } from 'node:url';
import { Worker } from 'prefork';
import { params, report } from './lib/child.mjs';
import { commandCounts, commandDelta, connect, quietLogger } from './lib/redis.mjs';

const { url, seconds = 10, settleMs = 1000 } = params();
const app = fileURLToPath(new URL('./fixtures/prefork-tasks.mjs', import.meta.url));
const worker = new Worker({ app, broker: url, namespace: 'bench', concurrency: 2, logger: quietLogger() });
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
