// B4 — idle memory of `prefork worker -c 2` as a user starts it: the CLI's
// process and its children, the jobs enqueued from this (separate) process.
// Measures: RSS, PSS and USS (Private_Clean + Private_Dirty), MiB, summed over
// the CLI process and every descendant (/proc/<pid>/smaps_rollup), `settleMs`
// after the last of 50 no-op jobs settled. Check: processes + 1 counted.
// Knobs ($BENCH_PARAMS): url, processes (2), settleMs (3,000).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from 'prefork';
import { params, report } from './lib/child.mjs';
import { perProcess, treeMemory } from './lib/memory.mjs';
import { quietLogger } from './lib/redis.mjs';

const { url, processes = 2, settleMs = 3000 } = params();
const app = fileURLToPath(new URL('./fixtures/prefork-tasks.mjs', import.meta.url));
const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const node = spawn(
  process.execPath,
  [cli, 'worker', '--app', app, '--broker', url, '-c', String(processes), '-n', 'b4'],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const exited = new Promise((resolve) => node.once('exit', resolve));
await new Promise((resolve, reject) => {
  let out = '';
  node.stdout.on('data', (d) => {
    out += d;
    if (/"msg":"worker ready"/.test(out)) resolve();
  });
  node.once('exit', (code) => reject(new Error(`prefork worker exited ${code} before it was ready`)));
});
node.stdout.resume();
const client = new Client({ broker: url, logger: quietLogger() });
const handles = await client.enqueueMany(Array.from({ length: 50 }, (_, i) => ({ name: 'noop', args: [i] })));
await Promise.all(handles.map((h) => h.result()));
await client.close();
await new Promise((r) => setTimeout(r, settleMs));
const m = treeMemory(node.pid);
node.kill('SIGTERM');
await exited;
report({
  rssMiB: m.rssMiB,
  pssMiB: m.pssMiB,
  ussMiB: m.ussMiB,
  processes: m.processes,
  ok: m.processes === processes + 1,
  check: `${m.processes} processes counted (expected ${processes + 1}): ${perProcess(m)}`,
});
