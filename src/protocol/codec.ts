import { Packr, Unpackr } from 'msgpackr';

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
} as ConstructorParameters<typeof Packr>[0]);
const unpackr = new Unpackr({ useRecords: false, moreTypes: true, mapsAsObjects: true });

export function encodeBody(value: unknown): Buffer {
  return packr.pack(value);
}

export function decodeBody(bytes: Uint8Array): unknown {
  return unpackr.unpack(bytes);
}

export const HEADER_SIZE = 4;
