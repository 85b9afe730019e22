/**
 * The two byte-level edits a workflow makes to msgpack, without decoding any
 * value (lib/workflow.lua does the same in Redis): put the previous step's
 * result in front of a job's arguments, and make a list of a group's results.
 */

function arrayHeader(n: number): Buffer {
  if (n < 16) return Buffer.from([0x90 + n]);
  if (n < 0x10000) return Buffer.from([0xdc, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = 0xdd;
  b.writeUInt32BE(n, 1);
  return b;
}

/** The msgpack array `payload` with the msgpack value `first` in front of its elements (a payload that is no array is left as is). */
export function prependArg(payload: Uint8Array, first: Uint8Array): Buffer {
  const b = payload[0] ?? 0;
  let n: number;
  let at: number;
  if (b >= 0x90 && b <= 0x9f) [n, at] = [b - 0x90, 1];
  else if (b === 0xdc) [n, at] = [((payload[1] ?? 0) << 8) | (payload[2] ?? 0), 3];
  else if (b === 0xdd) [n, at] = [Buffer.from(payload).readUInt32BE(1), 5];
  else return Buffer.from(payload);
  return Buffer.concat([arrayHeader(n + 1), first, payload.subarray(at)]);
}

/** A msgpack array of the msgpack values `items`. */
export function packList(items: readonly Uint8Array[]): Buffer {
  return Buffer.concat([arrayHeader(items.length), ...items]);
}
