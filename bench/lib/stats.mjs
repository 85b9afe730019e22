// Small statistics helpers for the benchmarks: median / min / max over runs,
// percentiles over latency samples (nearest-rank on a sorted copy).

/** Sorted numeric copy. */
function sorted(values) {
  return Float64Array.from(values).sort();
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const s = sorted(values);
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[rank];
}

export function median(values) {
  if (values.length === 0) return NaN;
  const s = sorted(values);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** { median, min, max, n } of a list of run values. */
export function summarize(values) {
  if (values.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), n: values.length };
}
