// Top self-time functions of a V8 .cpuprofile (from `node --cpu-prof`, e.g.
// BENCH_CPU_PROF=<dir> npm run bench, or one scenario run by hand).
// Usage: node bench/lib/profile-top.mjs <file.cpuprofile> [count]
import { readFileSync } from 'node:fs';

const [file, count = '25'] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  const n = byId.get(profile.samples[i]);
  const f = n.callFrame;
  const where = f.url ? `${f.url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, '$1/')}:${f.lineNumber + 1}` : '';
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
  self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
for (const [k, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(count))) {
  console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
}
