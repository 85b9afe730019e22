import { encodeBody, HEADER_SIZE } from './codec.js';
import { FrameTooLargeError } from './frame-decoder.js';

/**
 * Collects frames (4-byte big-endian length + msgpack body) into one buffer so
 * that many frames go out in a single write. Encoding happens on `push`, so a
 * value that cannot be encoded throws there and leaves the batch intact.
 */
export class FrameBatch {
  private parts: Buffer[] = [];
  private bytes = 0;

  /** `maxFrameSize`: a body larger than this is refused at push, before it can reach the pipe. */
  constructor(private readonly maxFrameSize = Infinity) {}

  get length(): number {
    return this.parts.length >> 1;
  }

  get byteLength(): number {
    return this.bytes;
  }

  push(message: unknown): void {
    const body = encodeBody(message);
    if (body.length > this.maxFrameSize) throw new FrameTooLargeError(body.length, this.maxFrameSize);
    const header = Buffer.allocUnsafe(HEADER_SIZE);
    header.writeUInt32BE(body.length, 0);
    this.parts.push(header, body);
    this.bytes += HEADER_SIZE + body.length;
  }

  /** Returns the batch as one buffer and empties it. */
  take(): Buffer {
    const out = Buffer.concat(this.parts, this.bytes);
    this.parts = [];
    this.bytes = 0;
    return out;
  }
}

export function encodeFrame(message: unknown): Buffer {
  const batch = new FrameBatch();
  batch.push(message);
  return batch.take();
}
