import { describe, expect, it } from 'vitest';
import { decodeBody, encodeBody } from '../../../dist/protocol/codec.js';
import { FrameDecoder } from '../../../dist/protocol/frame-decoder.js';
import { FrameBatch, encodeFrame } from '../../../dist/protocol/frame-encoder.js';

function decodeAll(bytes: Buffer): unknown[] {
  const out: unknown[] = [];
  new FrameDecoder(1 << 20).push(bytes, (body) => out.push(decodeBody(body)));
  return out;
}

describe('FrameBatch', () => {
  it('round-trips many messages through one buffer', () => {
    const messages = [
      [1, 1, 'echo', ['a', 1, null, true], null],
      [1, 2, 'add', [1, 2], { id: 'job-2', queue: 'q', retries: 1 }],
      [3, 2],
      [2],
      [1, 3, 'bytes', new Uint8Array([1, 2, 3]), null],
    ];
    const batch = new FrameBatch();
    for (const m of messages) batch.push(m);
    expect(batch.length).toBe(messages.length);
    const bytes = batch.take();
    expect(decodeAll(bytes)).toEqual(messages);
  });

  it('writes each frame as a 4-byte big-endian length followed by the msgpack body', () => {
    const body = encodeBody([12, 9, 'value']);
    const frame = encodeFrame([12, 9, 'value']);
    expect(frame.readUInt32BE(0)).toBe(body.length);
    expect(frame.subarray(4)).toEqual(body);
  });

  it('counts bytes and frames, and is empty after take()', () => {
    const batch = new FrameBatch();
    batch.push([11, 1]);
    batch.push([11, 2]);
    const expectedBytes = 2 * 4 + encodeBody([11, 1]).length + encodeBody([11, 2]).length;
    expect(batch.byteLength).toBe(expectedBytes);
    expect(batch.take().length).toBe(expectedBytes);
    expect(batch.length).toBe(0);
    expect(batch.byteLength).toBe(0);
    expect(batch.take().length).toBe(0);
  });

  it('throws on a value that cannot be encoded and keeps the frames already pushed', () => {
    const batch = new FrameBatch();
    batch.push([11, 1]);
    expect(() => batch.push([12, 1, () => 1])).toThrow();
    expect(batch.length).toBe(1);
    expect(decodeAll(batch.take())).toEqual([[11, 1]]);
  });

  it('hands a batch of one frame over as that frame, header included', () => {
    const batch = new FrameBatch();
    batch.push([11, 5]);
    const bytes = batch.take();
    expect(bytes.readUInt32BE(0)).toBe(bytes.length - 4);
    expect(decodeAll(bytes)).toEqual([[11, 5]]);
  });

  it('refuses a frame above maxFrameSize at push and keeps the rest', () => {
    const batch = new FrameBatch(16);
    batch.push([11, 1]);
    expect(() => batch.push([12, 1, 'x'.repeat(64)])).toThrow(/maxFrameSize/);
    expect(decodeAll(batch.take())).toEqual([[11, 1]]);
  });
});

describe('encodeFrame', () => {
  it('returns frames that later encodes never write over', () => {
    const first = encodeFrame([12, 1, 'first']);
    const copy = Buffer.from(first);
    // Enough later frames to fill and replace msgpackr's output buffer several times.
    for (let i = 0; i < 5000; i++) encodeFrame([12, i, 'y'.repeat(i % 50)]);
    expect(first).toEqual(copy);
    expect(decodeAll(first)).toEqual([[12, 1, 'first']]);
  });
});
