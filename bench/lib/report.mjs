// What a workload module uses to turn its runs into table cells and targets.
// A case's runs are in `case.results` (one object per run, as its scenario
// file reported it, plus `run`: the round number). Only runs that passed
// their check count; ratios pair ours and the peer of the same round.
import { summarize } from './stats.mjs';

export const good = (c) => (c?.results ?? []).filter((r) => !r.error && r.ok);
const bad = (c) => (c?.results ?? []).length - good(c).length;

/** Summary { median, min, max, n } of one metric (a key, or a function of a run) over a case's good runs. */
export function stat(c, key) {
  return summarize(good(c).map((r) => (typeof key === 'function' ? key(r) : r[key])));
}

/** Per-round ratio a/b of one metric (both runs of the round passed), summarized. */
export function ratio(a, b, key) {
  const values = [];
  for (const ra of good(a)) {
    const rb = good(b).find((r) => r.run === ra.run);
    if (rb) values.push(ra[key] / rb[key]);
  }
  return summarize(values);
}

export const int = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : 'n/a');
export const dec = (d) => (x) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
export const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : 'n/a');
export const times = (x) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');
export const count = (x) => x.toLocaleString('en-US');

/** "median (min–max)", or the single value when there was one run. */
export function cell(s, f = int) {
  if (s.n === 0) return 'n/a';
  if (s.n === 1) return f(s.median);
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

/** How many runs, and how many failed their check. */
export function runsCell(c) {
  const n = (c.results ?? []).length;
  const b = bad(c);
  return b === 0 ? `${n}` : `${n - b}/${n} ok (${b} FAILED CHECK)`;
}

/**
 * One target row. mode: 'atLeast' (a floor), 'atMost' (a ceiling) or
 * 'below' (strictly under). A miss says by how much, from the median.
 * → { issue, target, measured, met, missed }
 */
export function target(issue, text, s, f, goal, mode, unit = '') {
  if (s.n === 0) return { issue, target: text, measured: 'not measured', met: 'n/a', missed: false };
  const m = s.median;
  const ok = mode === 'below' ? m < goal : mode === 'atLeast' ? m >= goal : m <= goal;
  const by =
    mode === 'atLeast' ? `${((1 - m / goal) * 100).toFixed(0)}% short` : `${(m / goal).toFixed(2)}× the ceiling`;
  return { issue, target: text, measured: `${cell(s, f)}${unit}`, met: ok ? 'met' : `MISSED (${by})`, missed: !ok };
}

/** A markdown table. */
export function markdown({ header, rows }) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
