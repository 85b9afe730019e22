import {
  PayloadDecodeError,
  ResultSerializationError,
  SoftTimeLimitExceeded,
  UnknownTaskError,
  messageOf,
} from '../errors.js';
import { decodeBody } from '../protocol/codec.js';
import { serializeError } from '../protocol/error-codec.js';
import type { SerializedError } from '../job-types.js';
import { MessageType, type JobFrame } from '../protocol/messages.js';
import { taskContextStore, type TaskFunction } from '../tasks.js';
import { Fifo } from '../util/fifo.js';
import type { ParentChannel } from './channel.js';
import { JobContext } from './job-context.js';

/** Told when jobs run: the watchdog (watchdog.ts), which must act while a task blocks the event loop. */
export interface JobWatch {
  /** A job starts; `timeLimit` is its hard limit in ms, if it has one. */
  jobStarted(timeLimit: number | undefined): void;
  /** Nothing runs any more. */
  idle(): void;
}

/**
 * Runs the jobs the parent sent, one at a time, in the order they came.
 * Before a job starts, everything queued (the previous RESULT and this ACK) is
 * written in one write, so the parent always knows which job was running if
 * this process dies in the middle of it.
 */
export class JobRunner {
  private readonly queue = new Fifo<JobFrame>();
  private running = false;
  private current: JobContext | undefined;
  private stopping = false;

  constructor(
    private readonly tasks: ReadonlyMap<string, TaskFunction>,
    private readonly channel: ParentChannel,
    private readonly reportMemory: boolean,
    private readonly watch: JobWatch,
    private readonly onIdleAfterShutdown: () => void,
  ) {}

  push(job: JobFrame): void {
    if (this.stopping) {
      // Nothing sent after SHUTDOWN runs here; the parent gets it back unstarted rather than losing it.
      this.sendWithdrawn([job[1]]);
      return;
    }
    this.queue.push(job);
    if (!this.running) this.runQueued();
  }

  softTimeout(seq: number): void {
    if (this.current !== undefined && this.current.seq === seq) this.current.softTimeout();
  }

  /**
   * SHUTDOWN: finish what was sent before it, then exit. inq is still read:
   * a SOFT_TIMEOUT or WITHDRAW for those jobs may follow.
   */
  shutdown(): void {
    this.stopping = true;
    if (!this.running) this.runQueued();
  }

  /** WITHDRAW: give back every job received and not started; the running one (if any) goes on. */
  withdraw(): void {
    const seqs = this.queue.drain().map((job) => job[1]);
    if (seqs.length > 0) this.sendWithdrawn(seqs);
  }

  private sendWithdrawn(seqs: number[]): void {
    this.channel.send([MessageType.WITHDRAWN, seqs]);
    this.channel.flush();
  }

  private runQueued(): void {
    this.running = true;
    for (let job = this.queue.shift(); job !== undefined; job = this.queue.shift()) {
      const [, seq, name, rawArgs, meta, timeLimit] = job;
      this.channel.send([MessageType.ACK, seq]);
      this.channel.flush();
      this.watch.jobStarted(timeLimit);
      const ctx = new JobContext(seq, meta?.id ?? String(seq), name, meta?.queue, meta?.retries ?? 0);
      const fn = this.tasks.get(name);
      if (fn === undefined) {
        this.fail(ctx, new UnknownTaskError(name, [...this.tasks.keys()]));
        continue;
      }
      const args = decodeArgs(name, rawArgs);
      if (args instanceof Error) {
        this.fail(ctx, args);
        continue;
      }
      let out: unknown;
      this.current = ctx;
      try {
        out = taskContextStore.run(ctx, fn as (...a: unknown[]) => unknown, ...args);
      } catch (err) {
        this.fail(ctx, err);
        continue;
      }
      if (isThenable(out)) {
        out.then(
          (value) => this.resume(ctx, true, value),
          (err: unknown) => this.resume(ctx, false, err),
        );
        return;
      }
      this.succeed(ctx, out);
    }
    this.current = undefined;
    this.running = false;
    this.watch.idle();
    this.channel.flush();
    if (this.stopping) this.onIdleAfterShutdown();
  }

  private resume(ctx: JobContext, ok: boolean, outcome: unknown): void {
    if (ok) this.succeed(ctx, outcome);
    else this.fail(ctx, outcome);
    this.runQueued();
  }

  private succeed(ctx: JobContext, value: unknown): void {
    try {
      if (this.reportMemory) this.channel.send([MessageType.RESULT_OK, ctx.seq, value, process.memoryUsage.rss()]);
      else this.channel.send([MessageType.RESULT_OK, ctx.seq, value]);
    } catch (err) {
      this.fail(ctx, new ResultSerializationError(ctx.name, messageOf(err)));
    }
  }

  private fail(ctx: JobContext, thrown: unknown): void {
    let err = thrown;
    if (ctx.softTimedOut && !(err instanceof SoftTimeLimitExceeded)) {
      err = new SoftTimeLimitExceeded(
        `task ${ctx.name} exceeded its soft time limit and then threw: ${messageOf(thrown)}`,
      );
    }
    const rss = this.reportMemory ? process.memoryUsage.rss() : undefined;
    try {
      this.sendError(ctx.seq, serializeError(err), rss);
    } catch (encodeErr) {
      // The error itself is too big for a frame (huge props or stack): send what surely fits.
      const name = err instanceof Error ? err.name : 'Error';
      this.sendError(
        ctx.seq,
        { name, message: `${messageOf(err).slice(0, 2000)} (error details dropped: ${messageOf(encodeErr)})` },
        rss,
      );
    }
  }

  private sendError(seq: number, wire: SerializedError, rss: number | undefined): void {
    if (rss !== undefined) this.channel.send([MessageType.RESULT_ERROR, seq, wire, rss]);
    else this.channel.send([MessageType.RESULT_ERROR, seq, wire]);
  }
}

/** Arguments arrive as an array, or as msgpack bytes straight from a broker: decoded here, where a bad payload fails only its job. */
function decodeArgs(task: string, raw: unknown): unknown[] | PayloadDecodeError {
  if (isArgumentArray(raw)) return raw;
  if (!(raw instanceof Uint8Array))
    return new PayloadDecodeError(task, `expected an argument array, got ${typeof raw}`);
  let value: unknown;
  try {
    value = decodeBody(raw);
  } catch (err) {
    return new PayloadDecodeError(task, messageOf(err));
  }
  return isArgumentArray(value)
    ? value
    : new PayloadDecodeError(task, `expected an argument array, got ${typeof value}`);
}

/** Array.isArray without its `any[]`: the elements are still unknown. */
function isArgumentArray(v: unknown): v is unknown[] {
  return Array.isArray(v);
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    v !== null &&
    (typeof v === 'object' || typeof v === 'function') &&
    typeof (v as PromiseLike<unknown>).then === 'function'
  );
}
