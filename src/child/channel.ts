import { Socket } from 'node:net';
import { FrameBatch } from '../protocol/frame-encoder.js';
import { FrameDecoder } from '../protocol/frame-decoder.js';
import type { ChildMessage, ParentMessage } from '../protocol/messages.js';

/**
 * The child's end of the pipes: frames in on fd 0 (inq), frames out on fd 1
 * (outq). Before anything else runs, `process.stdout` is pointed at stderr, so
 * a task's console.log or process.stdout.write can never reach outq.
 */
export class ParentChannel {
  private readonly input: Socket;
  private readonly output: Socket;
  private readonly batch: FrameBatch;
  private readonly decoder: FrameDecoder;

  constructor(maxFrameSize: number, onMessage: (msg: ParentMessage) => void, onParentGone: () => void) {
    this.batch = new FrameBatch(maxFrameSize);
    this.output = new Socket({ fd: 1, readable: false, writable: true });
    Object.defineProperty(process, 'stdout', { configurable: true, enumerable: true, get: () => process.stderr });
    this.output.on('error', onParentGone);
    this.decoder = new FrameDecoder(maxFrameSize);
    this.input = new Socket({ fd: 0, readable: true, writable: false });
    this.input.on('data', (chunk: Buffer) => {
      this.decoder.decode(chunk, onMessage as (msg: unknown) => void);
    });
    // EOF on inq means the parent is gone: exit rather than linger as an orphan.
    this.input.on('end', onParentGone);
    this.input.on('error', onParentGone);
  }

  /** Queues a frame; throws if the message cannot be encoded (the batch stays intact). */
  send(message: ChildMessage): void {
    this.batch.push(message);
  }

  /** Encodes a frame without queuing it (throws as send would): see sendFrame. */
  encode(message: ChildMessage): Buffer {
    return this.batch.encode(message);
  }

  /** Queues a frame made by encode(). */
  sendFrame(frame: Buffer): void {
    this.batch.pushFrame(frame);
  }

  /** Frames queued and not yet written. */
  get pending(): number {
    return this.batch.length;
  }

  /** Writes everything queued in one write; true when every byte reached the pipe at once (none waits in this process). */
  flush(): boolean {
    if (this.batch.length > 0) this.output.write(this.batch.take());
    return this.output.writableLength === 0;
  }

  /** Flushes, then calls back once the bytes have left the process. */
  flushAndWait(done: () => void): void {
    if (this.batch.length === 0 && this.output.writableLength === 0) {
      done();
      return;
    }
    this.output.write(this.batch.length > 0 ? this.batch.take() : Buffer.alloc(0), () => done());
  }
}
