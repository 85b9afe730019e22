import { describe, expect, it } from 'vitest';
import { decodeBody } from '../../../dist/protocol/codec.js';
import { FrameTooLargeError, ProtocolError } from 'prefork';
import { FrameDecoder } from '../../../dist/protocol/frame-decoder.js';
import { FrameBatch } from '../../../dist/protocol/frame-encoder.js';

const MESSAGES: unknown[] = [
  [11, 1],
  [12, 1, 'a string result', 123_456],
  [12, 2, { nested: { list: [1, 2, 3], text: 'x'.repeat(300) } }],
  [13, 3, { name: 'Error', message: 'boom', stack: 'Error: boom\n    at somewhere' }],
  [10, 4242, ['echo', 'add']],
];

function encodeAll(messages: unknown[]): Buffer {
  const batch = new FrameBatch();
  for (const m of messages) batch.push(m);
  return batch.take();
}

/** Feeds `chunks` to a fresh decoder and returns the decoded messages. */
function decodeChunks(chunks: Buffer[], max = 1024 * 1024): unknown[] {
  const decoder = new FrameDecoder(max);
  const out: unknown[] = [];
  for (const chunk of chunks) decoder.push(chunk, (body) => out.push(decodeBody(body)));
  expect(decoder.buffered).toBe(0);
  return out;
}

describe('FrameDecoder', () => {
  const stream = encodeAll(MESSAGES);

  it('decodes several frames delivered in one chunk', () => {
    expect(decodeChunks([stream])).toEqual(MESSAGES);
  });

  it('decodes frames delivered one byte at a time', () => {
    const bytes = [...stream].map((b) => Buffer.from([b]));
    expect(decodeChunks(bytes)).toEqual(MESSAGES);
  });

  it('decodes the stream split in two at every possible point', () => {
    for (let i = 0; i <= stream.length; i++) {
      expect(decodeChunks([stream.subarray(0, i), stream.subarray(i)]), `split at ${i}`).toEqual(MESSAGES);
    }
  });

  it('decodes the stream split in three at every pair of points', () => {
    const small = encodeAll([
      [11, 1],
      [12, 1, 'ok'],
      [11, 2],
      [12, 2, [1, 2]],
    ]);
    const expected = [
      [11, 1],
      [12, 1, 'ok'],
      [11, 2],
      [12, 2, [1, 2]],
    ];
    for (let i = 0; i <= small.length; i++) {
      for (let j = i; j <= small.length; j++) {
        const chunks = [small.subarray(0, i), small.subarray(i, j), small.subarray(j)];
        expect(decodeChunks(chunks), `split at ${i}, ${j}`).toEqual(expected);
      }
    }
  });

  it('holds back a partial frame and reports how many bytes it holds', () => {
    const decoder = new FrameDecoder(1024);
    const frames: Buffer[] = [];
    const one = encodeAll([[11, 7]]);
    decoder.push(one.subarray(0, 2), (b) => frames.push(b));
    expect(frames).toHaveLength(0);
    expect(decoder.buffered).toBe(2);
    decoder.push(one.subarray(2, 5), (b) => frames.push(b));
    expect(frames).toHaveLength(0);
    expect(decoder.buffered).toBe(5);
    decoder.push(one.subarray(5), (b) => frames.push(b));
    expect(frames.map((b) => decodeBody(b))).toEqual([[11, 7]]);
    expect(decoder.buffered).toBe(0);
  });

  it('delivers a zero-length frame as an empty body', () => {
    const decoder = new FrameDecoder(1024);
    const bodies: Buffer[] = [];
    decoder.push(Buffer.from([0, 0, 0, 0]), (b) => bodies.push(b));
    expect(bodies).toHaveLength(1);
    expect(bodies[0]!.length).toBe(0);
  });

  it('ignores empty chunks', () => {
    const empty = Buffer.alloc(0);
    expect(decodeChunks([empty, stream.subarray(0, 3), empty, stream.subarray(3), empty])).toEqual(MESSAGES);
  });

  it('accepts a frame of exactly the maximum size', () => {
    const body = Buffer.alloc(64, 7);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(64, 0);
    const bodies: Buffer[] = [];
    new FrameDecoder(64).push(Buffer.concat([header, body]), (b) => bodies.push(b));
    expect(bodies).toEqual([body]);
  });

  it('throws FrameTooLargeError on a header above the maximum, before the body arrives', () => {
    const decoder = new FrameDecoder(64);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(65, 0);
    let thrown: unknown;
    try {
      decoder.push(header, () => undefined);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(FrameTooLargeError);
    // A protocol error, with its own code.
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect(thrown).toMatchObject({ size: 65, max: 64, code: 'PREFORK_FRAME_TOO_LARGE' });
    expect((thrown as Error).message).toContain('65');
  });

  it('throws FrameTooLargeError when the oversized header itself arrives split', () => {
    const decoder = new FrameDecoder(1024);
    decoder.push(Buffer.from([0xff, 0xff]), () => undefined);
    expect(() => decoder.push(Buffer.from([0xff, 0xf0]), () => undefined)).toThrow(FrameTooLargeError);
  });

  it('throws FrameTooLargeError on an oversized frame that follows good ones in the same chunk, after delivering them', () => {
    const decoder = new FrameDecoder(1024);
    const seen: unknown[] = [];
    const bad = Buffer.from([0x7f, 0xff, 0xff, 0xff]);
    expect(() => decoder.push(Buffer.concat([encodeAll([[11, 1]]), bad]), (b) => seen.push(decodeBody(b)))).toThrow(
      FrameTooLargeError,
    );
    expect(seen).toEqual([[11, 1]]);
  });
});

describe('FrameDecoder.decode (bodies read in place)', () => {
  const stream = encodeAll(MESSAGES);

  function decodeInPlace(chunks: Buffer[]): unknown[] {
    const decoder = new FrameDecoder(1024 * 1024);
    const out: unknown[] = [];
    for (const chunk of chunks) decoder.decode(chunk, (msg) => out.push(msg));
    expect(decoder.buffered).toBe(0);
    return out;
  }

  it('decodes several frames delivered in one chunk, each to exactly its own message', () => {
    expect(decodeInPlace([stream])).toEqual(MESSAGES);
  });

  it('decodes the stream split in two at every possible point', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      expect(decodeInPlace([stream.subarray(0, cut), stream.subarray(cut)])).toEqual(MESSAGES);
    }
  });

  it('throws when a body holds more than one value (a frame is exactly one message)', () => {
    const body = Buffer.concat([Buffer.from([0x01]), Buffer.from([0x02])]);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length);
    expect(() => new FrameDecoder(1024).decode(Buffer.concat([head, body]), () => undefined)).toThrow();
  });

  it('throws on a body cut short by its header, not reading into the next frame', () => {
    const next = encodeAll([[11, 7]]);
    const body = Buffer.from([0x92, 0x0b]); // an array of 2 with only one element
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length);
    expect(() => new FrameDecoder(1024).decode(Buffer.concat([head, body, next]), () => undefined)).toThrow();
  });
});
