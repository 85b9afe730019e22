/**
 * JSON of any value a task may take or return (msgpack has more types than
 * JSON): a bigint as its decimal string, a Map as its [key, value] pairs,
 * a Set as an array, bytes as base64. Never throws on those.
 */
export function jsonText(value: unknown): string {
  return (
    JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
      // The value before toJSON: a Buffer's own toJSON would list every byte.
      const raw = this[key];
      if (raw instanceof Uint8Array) return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64');
      if (typeof v === 'bigint') return v.toString();
      if (v instanceof Map) return [...(v as Map<unknown, unknown>)];
      if (v instanceof Set) return [...(v as Set<unknown>)];
      return v;
    }) ?? 'undefined'
  );
}
