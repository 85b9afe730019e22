// Top self-time functions of a V8 .cpuprofile (written by `node --cpu-prof`).
import { readFileSync } from 'node:fs';

/** → { totalMs, top: [{ name, where, ms, share }] }, heaviest first. */
export function topSelf(file, count = 15) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const f = byId.get(profile.samples[i]).callFrame;
    const where = f.url
      ? `${f.url.replace(/^file:\/\/.*?\/(node_modules|dist|bench)\//, '$1/')}:${f.lineNumber + 1}`
      : '';
    const key = `${f.functionName || '(anonymous)'}\t${where}`;
    self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const top = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([k, us]) => {
      const [name, where] = k.split('\t');
      return { name, where, ms: us / 1000, share: us / total };
    });
  return { totalMs: total / 1000, top };
}
