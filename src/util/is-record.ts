/** An object with fields (not an array, not null), as options and parsed JSON must be; its fields are still unknown. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
