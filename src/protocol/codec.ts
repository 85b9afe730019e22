import { Packr, RESERVE_START_SPACE, Unpackr } from 'msgpackr';

/**
 * The only msgpackr configuration for the pipes. Records are off: frames are
 * short tuples, and both ends must agree without sharing structure state.
 */
const packr = new Packr({
  useRecords: false,
  moreTypes: true,
  mapsAsObjects: true,
  // msgpackr would quietly write a function as nil; a result that cannot make the trip must fail loudly.
  writeFunction: () => {
    throw new TypeError('a function cannot be serialized');
  },
});
const unpackr = new Unpackr({ useRecords: false, moreTypes: true, mapsAsObjects: true });

export const HEADER_SIZE = 4;

/** msgpackr leaves this many bytes free in front of the body: room for the frame header, so no copy is needed to add it. */
const WITH_HEADER_ROOM = RESERVE_START_SPACE | HEADER_SIZE;

/** One range object for every decode: msgpackr reads start/end at once and keeps no reference. */
const range = { start: 0, end: 0 };

export function encodeBody(value: unknown): Buffer {
  return packr.pack(value);
}

/**
 * Encodes `value` with HEADER_SIZE free bytes in front, left for the caller to
 * fill. The result is a view into msgpackr's output buffer, which msgpackr
 * never writes over (it moves on, or to a new buffer).
 */
export function encodeWithHeaderRoom(value: unknown): Buffer {
  return packr.pack(value, WITH_HEADER_ROOM);
}

export function decodeBody(bytes: Uint8Array): unknown {
  return unpackr.unpack(bytes);
}

/** Decodes bytes[start, end) in place: no view and no DataView per frame (msgpackr caches one per source buffer). */
export function decodeRange(bytes: Uint8Array, start: number, end: number): unknown {
  range.start = start;
  range.end = end;
  return unpackr.unpack(bytes, range);
}
