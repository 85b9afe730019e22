// B1 (latency) — enqueue → result on an idle worker.
// Measures: p50 / p99 / mean in µs from client.enqueue() to the resolved
// handle.result(), `jobs` sequential no-op jobs, one at a time, results stored.
// Knobs ($BENCH_PARAMS): url, jobs (2,000), warmup (2,000: the method's), strategy (fair), processes (2).
// Clock: per job, performance.now() before enqueue and after result().
// Check: every result equals its argument.
import { fileURLToPath } from 'node:url';
import { Client, Worker } from 'prefork';
import { params, report } from './lib/child.mjs';
import { quietLogger } from './lib/redis.mjs';
import { percentile } from './lib/stats.mjs';

const { url, jobs, warmup = 2000, strategy = 'fair', processes = 2 } = params();
const app = fileURLToPath(new URL('./fixtures/prefork-tasks.mjs', import.meta.url));
const logger = quietLogger();
const worker = new Worker({ app, broker: url, namespace: 'bench', concurrency: processes, strategy, logger });
await worker.start();
const client = new Client({ broker: url, namespace: 'bench', logger });
for (let i = 0; i < warmup; i++) await (await client.enqueue('noop', [i])).result();
const samples = new Float64Array(jobs);
let wrong = 0;
for (let i = 0; i < jobs; i++) {
  const t = performance.now();
  const v = await (await client.enqueue('noop', [i])).result();
  samples[i] = (performance.now() - t) * 1000;
  if (v !== i) wrong++;
}
await client.close();
await worker.stop();
report({
  p50: percentile(samples, 50),
  p99: percentile(samples, 99),
  mean: samples.reduce((a, b) => a + b, 0) / jobs,
  count: jobs,
  ok: wrong === 0,
  check: wrong === 0 ? `${jobs} results, all right` : `${wrong} wrong results`,
});
