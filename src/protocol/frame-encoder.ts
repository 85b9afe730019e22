import { encodeWithHeaderRoom, HEADER_SIZE } from './codec.js';
import { FrameTooLargeError } from '../errors.js';

/**
 * Collects frames (4-byte big-endian length + msgpack body) into one buffer so
 * that many frames go out in a single write. Encoding happens on `push`, so a
 * value that cannot be encoded throws there and leaves the batch intact. A
 * batch of one frame is written as encoded, without a copy.
 */
export class FrameBatch {
  private readonly frames: Buffer[] = [];
  private bytes = 0;

  /** `maxFrameSize`: a body larger than this is refused at push, before it can reach the pipe. */
  constructor(private readonly maxFrameSize = Infinity) {}

  get length(): number {
    return this.frames.length;
  }

  get byteLength(): number {
    return this.bytes;
  }

  push(message: unknown): void {
    this.pushFrame(this.encode(message));
  }

  /** Encodes a frame as push would (throwing the same errors) without queuing it: for a frame sent later, or not at all. */
  encode(message: unknown): Buffer {
    const frame = encodeFrame(message);
    const size = frame.length - HEADER_SIZE;
    if (size > this.maxFrameSize) throw new FrameTooLargeError(size, this.maxFrameSize);
    return frame;
  }

  /** Queues a frame made by encode(). */
  pushFrame(frame: Buffer): void {
    this.frames.push(frame);
    this.bytes += frame.length;
  }

  /** Returns the batch as one buffer and empties it. */
  take(): Buffer {
    const { frames } = this;
    const out = frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames, this.bytes);
    frames.length = 0;
    this.bytes = 0;
    return out;
  }
}

/** One frame: the header is written into the room msgpackr left in front of the body. */
export function encodeFrame(message: unknown): Buffer {
  const frame = encodeWithHeaderRoom(message);
  frame.writeUInt32BE(frame.length - HEADER_SIZE, 0);
  return frame;
}
