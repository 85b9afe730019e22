// B4 — idle memory of a node with 2 processes.
// Measures: RSS and PSS (MiB) summed over this process and every descendant
// (/proc/<pid>/smaps_rollup), `settleMs` after the node is up and idle.
// Knobs ($BENCH_PARAMS): impl (worker: prefork's Worker on Redis `url` |
// pool: prefork's Pool alone | piscina | workerpool), processes (2), settleMs (3,000).
// The scenario process itself is the node's parent (it imports only what the
// node needs), so the sum is the node's footprint. 50 no-op jobs run first,
// so the children have loaded their task code.
import { fileURLToPath } from 'node:url';
import { params, report } from './lib/child.mjs';
import { treeMemory } from './lib/memory.mjs';

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
report({
  rssMiB: m.rssMiB,
  pssMiB: m.pssMiB,
  processes: m.processes,
  ok: true,
  check: `${m.processes} processes: ${m.perProcess.map((p) => `${p.pid} rss ${(p.rss / 1024).toFixed(1)} pss ${(p.pss / 1024).toFixed(1)}`).join('; ')}`,
});
