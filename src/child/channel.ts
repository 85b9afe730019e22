import { readSync } from 'node:fs';
import { Socket } from 'node:net';
import { FrameBatch } from '../protocol/frame-encoder.js';
import { FrameDecoder } from '../protocol/frame-decoder.js';
import type { ChildMessage, ParentMessage } from '../protocol/messages.js';

/** The most inq bytes one read takes without the event loop (what libuv reads at once). */
const READ_SIZE = 64 * 1024;

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
  private readonly onMessage: (msg: unknown) => void;
  /** Frames are being handed over (a chunk's, or the replay's): reading more now would put later ones among them. */
  private decoding = false;
  private readonly scratch = Buffer.allocUnsafe(READ_SIZE);

  /**
   * `onMessage` gets each frame in the order it came; `onChunk` is called
   * once the frames of a chunk read by the event loop have all been handed
   * over (readWaiting's come without it). Bytes that are not frames (or
   * anything else thrown while frames are handed over) call `onBroken`,
   * which must end the process: the rest of inq cannot be read.
   */
  constructor(
    maxFrameSize: number,
    onMessage: (msg: ParentMessage) => void,
    private readonly onChunk: () => void,
    onParentGone: () => void,
    private readonly onBroken: (err: unknown) => never,
  ) {
    this.batch = new FrameBatch(maxFrameSize);
    this.output = new Socket({ fd: 1, readable: false, writable: true });
    Object.defineProperty(process, 'stdout', { configurable: true, enumerable: true, get: () => process.stderr });
    this.output.on('error', onParentGone);
    this.decoder = new FrameDecoder(maxFrameSize);
    this.onMessage = onMessage as (msg: unknown) => void;
    this.input = new Socket({ fd: 0, readable: true, writable: false });
    this.input.on('data', (chunk: Buffer) => {
      this.decode(chunk);
      onChunk();
    });
    // EOF on inq means the parent is gone: exit rather than linger as an orphan.
    this.input.on('end', onParentGone);
    this.input.on('error', onParentGone);
  }

  /**
   * Hands over frames that came before the runner could take them, in
   * order: no read of inq runs in between (see readWaiting), and reads may
   * follow once they are all handed over.
   */
  replay(messages: readonly ParentMessage[]): void {
    this.decoding = true;
    try {
      for (const msg of messages) this.onMessage(msg);
    } finally {
      this.decoding = false;
    }
    this.onChunk();
  }

  private decode(chunk: Buffer): void {
    this.decoding = true;
    try {
      this.decoder.decode(chunk, this.onMessage);
    } catch (err) {
      // Wherever the read happened (an event-loop chunk, or readWaiting inside a job's settlement), not
      // something a task's error handler may swallow: the child ends.
      this.onBroken(err);
    } finally {
      this.decoding = false;
    }
  }

  /**
   * Reads what already waits in inq, without a turn of the event loop, and
   * hands its frames over: a child that ends a job with the next one in the
   * pipe (fair writes one ahead) starts it at once. False when nothing was
   * there, at EOF, or on any error of the read: the stream meets the same
   * end or error on its own read and reports it. Never while frames are
   * being handed over (a chunk's, or the replay's), nor while the stream
   * holds bytes it has not handed over: those came first.
   */
  readWaiting(): boolean {
    if (this.decoding || this.input.readableLength > 0 || !this.input.readable) return false;
    let n: number;
    // An empty pipe answers EAGAIN, thrown as an error: one without a stack costs less to make
    // (unless a task module froze Error: then it is left alone).
    const stackLimit = lowerStackTraceLimit();
    try {
      n = readSync(0, this.scratch, 0, READ_SIZE, null);
    } catch {
      return false;
    } finally {
      if (stackLimit !== undefined) Error.stackTraceLimit = stackLimit;
    }
    if (n === 0) return false;
    // A copy: the decoder keeps views of a frame split across reads, and the scratch is read into again.
    this.decode(Buffer.from(this.scratch.subarray(0, n)));
    return true;
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

/** Sets Error.stackTraceLimit to 0 where it may be written, returning what to put back; undefined: left as it was. */
function lowerStackTraceLimit(): number | undefined {
  const own = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
  if (own === undefined || own.writable !== true || typeof own.value !== 'number') return undefined;
  Error.stackTraceLimit = 0;
  return own.value;
}
