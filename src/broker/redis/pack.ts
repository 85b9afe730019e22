/**
 * Arrays of byte strings as msgpack, every value as a `str` of its raw bytes
 * (Redis's cmsgpack reads no `bin` type, and a Lua string is bytes anyway).
 */
export function packStrings(rows: readonly (readonly (string | Buffer)[])[]): Buffer {
  let size = 5;
  for (const row of rows) size += packedBytes(row);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  const arrayHeader = (n: number): void => {
    if (n <= 15) {
      out[at++] = 0x90 | n;
    } else if (n <= 0xffff) {
      out[at++] = 0xdc;
      at = out.writeUInt16BE(n, at);
    } else {
      out[at++] = 0xdd;
      at = out.writeUInt32BE(n, at);
    }
  };
  const strHeader = (n: number): void => {
    if (n <= 31) {
      out[at++] = 0xa0 | n;
    } else if (n <= 0xff) {
      out[at++] = 0xd9;
      out[at++] = n;
    } else if (n <= 0xffff) {
      out[at++] = 0xda;
      at = out.writeUInt16BE(n, at);
    } else {
      out[at++] = 0xdb;
      at = out.writeUInt32BE(n, at);
    }
  };
  arrayHeader(rows.length);
  for (const row of rows) {
    arrayHeader(row.length);
    for (const v of row) {
      if (typeof v === 'string') {
        const n = Buffer.byteLength(v);
        strHeader(n);
        at += out.write(v, at, n, 'utf8');
      } else {
        strHeader(v.length);
        at += v.copy(out, at);
      }
    }
  }
  return out.subarray(0, at);
}

/** The most bytes one row takes in packStrings' output (its headers at their longest): alone, 5 more. */
export function packedBytes(row: readonly (string | Buffer)[]): number {
  let size = 5;
  for (const v of row) size += 5 + (typeof v === 'string' ? Buffer.byteLength(v) : v.length);
  return size;
}
