// Top self-time functions of a V8 .cpuprofile (from `node --cpu-prof`, e.g.
// BENCH_CPU_PROF=<dir> npm run bench, or one scenario run by hand).
// Usage: node bench/lib/profile-top.mjs <file.cpuprofile> [count]
import { topSelf } from './profile.mjs';

const [file, count = '25'] = process.argv.slice(2);
const { totalMs, top } = topSelf(file, Number(count));
console.log(`${file}: ${totalMs.toFixed(0)} ms sampled`);
for (const t of top)
  console.log(`${(t.share * 100).toFixed(1).padStart(5)}%  ${t.ms.toFixed(0).padStart(6)} ms  ${t.name} ${t.where}`);
