import { FrameTooLargeError } from '../errors.js';
import { decodeRange, HEADER_SIZE } from './codec.js';

/**
 * Splits a byte stream into frame bodies, whatever the split of bytes across
 * chunks. Pure: it knows nothing of processes (Node's serialization.js idea).
 * Bodies wholly inside one chunk are returned as views, without a copy; the
 * pieces of a frame split across chunks are joined once, when it is complete.
 */
export class FrameDecoder {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Bytes needed before the held pieces are worth joining (header, then whole frame). */
  private needed = 0;

  constructor(private readonly maxFrameSize: number) {}

  /** Calls `onFrame` for every complete body; throws FrameTooLargeError on an oversized header. */
  push(chunk: Buffer, onFrame: (body: Buffer) => void): void {
    this.scan(chunk, (buf, start, end) => onFrame(buf.subarray(start, end)));
  }

  /**
   * Like push, but hands over each body decoded, read in place (no per-frame
   * view). A whole frame whose body does not decode goes to `onUndecodable`,
   * which returns the message that stands for it or throws.
   */
  decode(
    chunk: Buffer,
    onMessage: (message: unknown) => void,
    onUndecodable: (body: Buffer, err: unknown) => unknown = (_, err) => {
      throw err;
    },
  ): void {
    this.scan(chunk, (buf, start, end) => {
      let message: unknown;
      try {
        message = decodeRange(buf, start, end);
      } catch (err) {
        message = onUndecodable(buf.subarray(start, end), err);
      }
      onMessage(message);
    });
  }

  private scan(chunk: Buffer, onFrame: (buf: Buffer, start: number, end: number) => void): void {
    let buf = chunk;
    if (this.heldBytes > 0) {
      this.held.push(chunk);
      this.heldBytes += chunk.length;
      if (this.heldBytes < this.needed) return;
      buf = Buffer.concat(this.held, this.heldBytes);
      this.held = [];
      this.heldBytes = 0;
    }
    let offset = 0;
    const end = buf.length;
    while (end - offset >= HEADER_SIZE) {
      const size = buf.readUInt32BE(offset);
      if (size > this.maxFrameSize) throw new FrameTooLargeError(size, this.maxFrameSize);
      const start = offset + HEADER_SIZE;
      if (end - start < size) {
        this.needed = HEADER_SIZE + size;
        break;
      }
      offset = start + size;
      onFrame(buf, start, offset);
    }
    if (offset < end) {
      if (end - offset < HEADER_SIZE) this.needed = HEADER_SIZE;
      this.held.push(buf.subarray(offset));
      this.heldBytes = end - offset;
    }
  }

  /** Bytes held back waiting for the rest of a frame. */
  get buffered(): number {
    return this.heldBytes;
  }
}
