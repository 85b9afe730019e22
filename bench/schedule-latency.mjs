// B8 — the delay between a tick's time and its job's start, on an idle node.
// Measures: for `ticks` ticks of an every-second entry, the child's
// Date.now() at the job's start minus the tick it stands for
// (currentTask().scheduledFor, on Redis's clock: Redis runs on this machine,
// so both clocks are this machine's). The first tick after start is left out.
// Knobs ($BENCH_PARAMS): url, ticks (10).
// Clock: Date.now() in the child against the tick's epoch ms.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineSchedule, Worker } from 'prefork';
import { params, report } from './lib/child.mjs';
import { quietLogger } from './lib/redis.mjs';
import { percentile } from './lib/stats.mjs';

const { url, ticks = 10 } = params();
const dir = mkdtempSync(join(tmpdir(), 'bench-schedule-'));
const file = join(dir, 'ticks');
const app = fileURLToPath(new URL('./fixtures/schedule-tasks.mjs', import.meta.url));
const worker = new Worker({
  app,
  broker: url,
  namespace: `bench-schedule-latency-${process.pid}`,
  concurrency: 2,
  schedule: defineSchedule({ beat: { task: 'tick', every: '1s' } }),
  pool: { env: { BENCH_TICK_FILE: file } },
  logger: quietLogger(),
});
await worker.start();
const read = () => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};
while (read().length < ticks + 1) await new Promise((r) => setTimeout(r, 200));
await worker.stop();
const delays = read().slice(1, ticks + 1);
rmSync(dir, { recursive: true, force: true });
report({
  p50: percentile(delays, 50),
  p99: percentile(delays, 99),
  max: Math.max(...delays),
  ticks: delays.length,
  ok: true,
  check: `${delays.length} ticks, delays ms: ${delays.join(' ')}`,
});
