// B4 — idle memory of a node with 2 processes.
// Measures: RSS, PSS and USS (Private_Clean + Private_Dirty), MiB, summed over
// this process and every descendant (/proc/<pid>/smaps_rollup), `settleMs`
// after the last of 50 no-op jobs settled.
// Knobs ($BENCH_PARAMS): impl (worker: prefork's Worker on Redis `url` |
// bullmq-sandboxed: a BullMQ Worker on `url` with a sandboxed processor FILE
// (peers/bullmq-processor.mjs) run in BullMQ's child processes, concurrency
// `processes`, useWorkerThreads false | pool: prefork's Pool alone | piscina |
// workerpool), processes (2), settleMs (3,000).
// The scenario process itself is the node's parent (it imports only what the
// node needs), so the sum is the node's footprint. 50 no-op jobs run first,
// so the children exist and have loaded their task code; the producer (prefork
// Client, BullMQ Queue) is closed before the wait. Check: the number of
// processes counted is processes + 1 (piscina: 1, its workers are threads).
import { fileURLToPath } from 'node:url';
import { params, report } from './lib/child.mjs';
import { perProcess, treeMemory } from './lib/memory.mjs';

const { impl, url, processes = 2, settleMs = 3000 } = params();
let close;
if (impl === 'worker') {
  const { Worker, Client } = await import('prefork');
  const { quietLogger } = await import('./lib/redis.mjs');
  const app = fileURLToPath(new URL('./fixtures/prefork-tasks.mjs', import.meta.url));
  const logger = quietLogger();
  const worker = new Worker({ app, broker: url, namespace: 'bench', concurrency: processes, logger });
  await worker.start();
  const client = new Client({ broker: url, namespace: 'bench', logger });
  const handles = await client.enqueueMany(Array.from({ length: 50 }, (_, i) => ({ name: 'noop', args: [i] })));
  await Promise.all(handles.map((h) => h.result()));
  await client.close();
  close = () => worker.stop();
} else if (impl === 'bullmq-sandboxed') {
  const { Queue, Worker } = await import('bullmq');
  const { hostname, port } = new URL(url);
  const connection = { host: hostname, port: Number(port), maxRetriesPerRequest: null };
  const processorFile = fileURLToPath(new URL('./peers/bullmq-processor.mjs', import.meta.url));
  const worker = new Worker('bench', processorFile, { connection, concurrency: processes, useWorkerThreads: false });
  let completed = 0;
  let failed = 0;
  worker.on('completed', () => completed++);
  worker.on('failed', () => failed++);
  await worker.waitUntilReady();
  const queue = new Queue('bench', { connection });
  await queue.addBulk(Array.from({ length: 50 }, (_, i) => ({ name: 'noop', data: { x: i } })));
  while (completed + failed < 50) await new Promise((r) => setTimeout(r, 10));
  if (failed) throw new Error(`${failed} BullMQ jobs failed`);
  await queue.close();
  close = () => worker.close();
} else {
  const { openPool } = await import('./lib/pools.mjs');
  const pool = await openPool(impl === 'pool' ? 'prefork' : impl, { processes });
  await Promise.all(Array.from({ length: 50 }, (_, i) => pool.call('noop', i)));
  close = async () => {
    await pool.close();
    pool.tally();
  };
}
await new Promise((r) => setTimeout(r, settleMs));
const m = treeMemory();
await close();
const expected = impl === 'piscina' ? 1 : processes + 1;
report({
  rssMiB: m.rssMiB,
  pssMiB: m.pssMiB,
  ussMiB: m.ussMiB,
  processes: m.processes,
  ok: m.processes === expected,
  check: `${m.processes} processes counted (expected ${expected}): ${perProcess(m)}`,
});
