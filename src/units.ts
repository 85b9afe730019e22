/** Parsers for the human-friendly values used by options and CLI flags. Each returns undefined when the text is not valid. */

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "250ms", "30s", "2m", "1.5h", "1d", or a bare number of milliseconds. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(value);
  if (m === null) return undefined;
  const unit = DURATION_UNITS[(m[2] ?? 'ms').toLowerCase()] as number;
  return Math.round(Number(m[1]) * unit);
}

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};

/** "512MB", "200MiB", "1G", "300k", or a bare number of bytes. */
export function parseSize(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)?\s*$/i.exec(value);
  if (m === null) return undefined;
  const unit = SIZE_UNITS[(m[2] ?? 'b').toLowerCase()];
  if (unit === undefined) return undefined;
  const bytes = Math.floor(Number(m[1]) * unit);
  return bytes > 0 ? bytes : undefined;
}

/** `[max, min]` or "max,min" (Celery's --autoscale); validated by the caller. */
export function parseAutoscale(value: unknown): [number, number] | undefined {
  let pair: unknown[];
  if (typeof value === 'string') {
    const parts = value.split(',').map((p) => p.trim());
    if (parts.length !== 2 || parts.some((p) => !/^\d+$/.test(p))) return undefined;
    pair = parts.map(Number);
  } else if (Array.isArray(value) && value.length === 2) {
    pair = value;
  } else {
    return undefined;
  }
  const [max, min] = pair;
  if (!Number.isInteger(max) || !Number.isInteger(min)) return undefined;
  if ((max as number) < 1 || (min as number) < 0 || (min as number) > (max as number)) return undefined;
  return [max as number, min as number];
}
