// A3 reference — the same busy loop in plain Node processes, no pool at all.
// Measures: wall time for `processes` bare child processes to run jobs /
// processes loops each (`iterations` per loop, the count run.js calibrated).
// Knobs ($BENCH_PARAMS): processes (2), jobs (4,000), iterations.
// Clock: each child is spawned, warms its loop up and prints "ready"; the clock
// starts when "go" is written to every child's stdin and stops when the last
// child prints "done". Check: each child's checksum.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { params, report } from './lib/child.mjs';
import { spin } from './lib/spin.mjs';

const { processes, jobs, iterations } = params();
const per = jobs / processes;
const script = fileURLToPath(new URL('./fixtures/bare-spin.mjs', import.meta.url));
const children = Array.from({ length: processes }, () =>
  spawn(process.execPath, [script, String(iterations), String(per)], { stdio: ['pipe', 'pipe', 'inherit'] }),
);
const lines = (child) => {
  let buf = '';
  const waiters = [];
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      waiters.shift()?.(line);
    }
  });
  return () => new Promise((resolve) => waiters.push(resolve));
};
const next = children.map(lines);
await Promise.all(next.map((n) => n()));
const dones = next.map((n) => n().then((line) => ({ line, at: performance.now() })));
const t0 = performance.now();
for (const c of children) c.stdin.write('go\n');
const ends = await Promise.all(dones);
const wallMs = Math.max(...ends.map((e) => e.at)) - t0;
const expected = per * spin(iterations);
const ok = ends.every((e) => e.line === `done ${expected}`);
report({
  wallMs,
  count: per * processes,
  ok,
  check: ok ? 'checksums right' : `bad: ${ends.map((e) => e.line).join(', ')}`,
});
