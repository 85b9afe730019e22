import {
  PayloadDecodeError,
  ResultSerializationError,
  Retry,
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
import type { StartRecordWriter } from '../protocol/start-record.js';
import type { ClaimTaker } from '../protocol/claim-pipe.js';
import type { ParentChannel } from './channel.js';
import { JobContext } from './job-context.js';

/**
 * How many times the runner reads inq itself, for jobs that came while it
 * ran others, within one turn of the event loop: then the loop gets a turn
 * (timers and signal handlers a task set, I/O), however the jobs end (an
 * async task's settlement runs the next one without a turn of the loop).
 */
export const READS_PER_TURN = 16;

/** Told when jobs run: the watchdog (watchdog.ts), which must act while a task blocks the event loop. */
export interface JobWatch {
  /** A job starts; `timeLimit` is its hard limit in ms, if it has one. */
  jobStarted(timeLimit: number | undefined): void;
  /** Nothing runs any more. */
  idle(): void;
}

/**
 * Runs the jobs the parent sent, one at a time, in the order they came.
 * Before a job starts, the parent is told, so it always knows which job was
 * running if this process dies in the middle of it: the ACK rides in one
 * write with the previous job's RESULT, or, when there is none, the start
 * record says it without waking the parent (announceStart).
 */
export class JobRunner {
  private readonly queue = new Fifo<JobFrame>();
  private running = false;
  /** Reads of inq by readOn since the event loop last had a turn. */
  private readsThisTurn = 0;
  /** Set while reads were counted: it runs when the loop has its turn, and starts the count over. */
  private turnTaken: NodeJS.Immediate | undefined;
  private current: JobContext | undefined;
  private stopping = false;
  /** A RESULT's RSS was above maxMemoryPerChild: it gave back what it held and runs nothing more. */
  private overMemory = false;

  constructor(
    private readonly tasks: ReadonlyMap<string, TaskFunction>,
    private readonly channel: ParentChannel,
    private readonly reportMemory: boolean,
    private readonly watch: JobWatch,
    private readonly onIdleAfterShutdown: () => void,
    /** Where starts are recorded (start-record.ts); undefined: every start is an ACK frame. */
    private record: StartRecordWriter | undefined,
    /** Where each job is claimed before it starts (claim-pipe.ts); undefined: every job received runs. */
    private readonly claims: ClaimTaker | undefined,
    /** maxMemoryPerChild in bytes (see overLimit); undefined: none. */
    private readonly memoryLimit: number | undefined = undefined,
  ) {}

  push(job: JobFrame): void {
    if (this.stopping) {
      // Nothing sent after SHUTDOWN runs here; the parent gets it back unstarted rather than losing it.
      if (this.claim(job[1])) this.sendWithdrawn([job[1]]);
      this.channel.flush();
      return;
    }
    this.queue.push(job);
    if (!this.running) this.runQueued();
  }

  softTimeout(seq: number): void {
    if (this.current !== undefined && this.current.seq === seq) this.current.softTimeout();
  }

  /** ABORT: the running job's signal aborts with `reason` (the job may still end on its own). */
  abort(seq: number, reason: Error): void {
    if (this.current !== undefined && this.current.seq === seq) this.current.abort(reason);
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
    // Claimed first: one the parent took back already is only dropped.
    const seqs = this.queue
      .drain()
      .map((job) => job[1])
      .filter((seq) => this.claim(seq));
    if (seqs.length > 0) this.sendWithdrawn(seqs);
    this.channel.flush();
  }

  private sendWithdrawn(seqs: number[]): void {
    this.channel.send([MessageType.WITHDRAWN, seqs]);
  }

  /**
   * Takes the job's byte from the claim pipe: true when it is this child's
   * to run (or give back). False when the parent took it back: it is
   * dropped, and the parent hears so with the next write. With no byte
   * left, every job still queued here was taken back too (the parent took
   * the last bytes, and writes nothing new until all of those are named):
   * they are dropped in the same frame, without a read each.
   */
  private claim(seq: number): boolean {
    if (this.claims === undefined || this.claims.claim()) return true;
    const seqs = [seq];
    for (let job = this.queue.shift(); job !== undefined; job = this.queue.shift()) seqs.push(job[1]);
    this.channel.send([MessageType.DROPPED, seqs]);
    return false;
  }

  /**
   * After a chunk of inq, or once the queue ran dry: jobs that came while
   * others ran may wait in inq already. They are read now, each run as it
   * is decoded, rather than after a turn of the event loop: a child that
   * ends a job with the next one in the pipe (fair writes one ahead) starts
   * it at once. At most READS_PER_TURN reads per turn of the event loop,
   * and only while outq takes what is written (its drain needs the loop);
   * what is left waits for the loop, which reads it as a chunk.
   */
  readOn(): void {
    while (this.readsThisTurn < READS_PER_TURN) {
      if (this.running || !this.channel.flush() || !this.channel.readWaiting()) return;
      this.readsThisTurn++;
      this.turnTaken ??= setImmediate(() => {
        this.turnTaken = undefined;
        this.readsThisTurn = 0;
      });
    }
  }

  private runQueued(): void {
    this.running = true;
    for (let job = this.queue.shift(); job !== undefined; job = this.queue.shift()) {
      const [, seq, name, rawArgs, meta, timeLimit] = job;
      if (!this.claim(seq)) continue;
      const ctx = new JobContext(seq, meta?.id ?? String(seq), name, meta?.queue, meta?.retries ?? 0, this.channel);
      if (meta?.scheduledFor !== undefined) ctx.scheduledFor = meta.scheduledFor;
      ctx.startedAt = Date.now();
      this.announceStart(seq, ctx.startedAt);
      this.watch.jobStarted(timeLimit);
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
        // A promise is itself; another thenable's then() runs in a job of its own, where a throw rejects and a second call is ignored.
        let settled: Promise<unknown>;
        try {
          settled = Promise.resolve(out);
        } catch (err) {
          // A promise whose `constructor` getter throws.
          this.fail(ctx, err);
          continue;
        }
        settled.then(
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
    else this.readOn();
  }

  /**
   * Tells the parent, before the job runs, that it starts. With the previous
   * RESULT queued, an ACK rides in its write (the parent wakes once for both);
   * otherwise the start record takes it, and a short job costs the parent one
   * wake-up, for its RESULT. An ACK still waiting in this process (the pipe
   * was full) would die with it: the record then says it too.
   */
  private announceStart(seq: number, startedAt: number): void {
    if (this.record !== undefined && this.channel.pending === 0) {
      if (this.recordStart(seq, startedAt)) return;
    }
    this.channel.send([MessageType.ACK, seq, startedAt]);
    if (!this.channel.flush() && this.record !== undefined) this.recordStart(seq, startedAt);
  }

  /** False when the record cannot be written: from then on every start is an ACK frame. */
  private recordStart(seq: number, startedAt: number): boolean {
    try {
      this.record?.write(seq, startedAt);
      return true;
    } catch (err) {
      this.record = undefined;
      process.stderr.write(`prefork child ${process.pid}: start record failed (${messageOf(err)}); sending ACKs\n`);
      return false;
    }
  }

  private resume(ctx: JobContext, ok: boolean, outcome: unknown): void {
    if (ok) this.succeed(ctx, outcome);
    else this.fail(ctx, outcome);
    this.runQueued();
  }

  private succeed(ctx: JobContext, value: unknown): void {
    ctx.end();
    const rss = this.reportMemory ? process.memoryUsage.rss() : null;
    try {
      this.channel.send([MessageType.RESULT_OK, ctx.seq, value, rss, ctx.startedAt]);
    } catch (err) {
      this.fail(ctx, new ResultSerializationError(ctx.name, messageOf(err)));
      return;
    }
    this.overLimit(rss);
  }

  /**
   * After a RESULT whose RSS is above maxMemoryPerChild, the parent retires
   * this child, but jobs it wrote ahead (fcfs fills the pipe; fair writes a
   * few ahead) sit in this queue before that SHUTDOWN, and would all run
   * here first: a leaking child could grow without bound past the limit that
   * exists to stop it. So it stops here, as on SHUTDOWN: the jobs it holds go
   * back unstarted (WITHDRAWN, after the RESULT: they run elsewhere), later
   * ones too, and it exits once idle.
   */
  private overLimit(rss: number | null): void {
    // Also when SHUTDOWN came already (maxTasksPerChild, a reload): the jobs sent before it would still run here.
    if (this.memoryLimit === undefined || rss === null || rss <= this.memoryLimit || this.overMemory) return;
    this.overMemory = true;
    this.stopping = true;
    this.withdraw();
  }

  private fail(ctx: JobContext, thrown: unknown): void {
    ctx.end();
    let err = thrown;
    // A Retry is the task's answer to running out of time (Celery's pattern): it keeps its delay and retry budget.
    if (ctx.softTimedOut && !isSoftTimeLimit(thrown) && !isRetry(thrown)) {
      err = new SoftTimeLimitExceeded(
        `task ${ctx.name} exceeded its soft time limit and then threw: ${messageOf(thrown)}`,
      );
    }
    const rss = this.reportMemory ? process.memoryUsage.rss() : null;
    // Never throws: what cannot be read is replaced by an ErrorSerializationError.
    const wire = serializeError(err, ctx.name);
    try {
      this.sendError(ctx, wire, rss);
    } catch (encodeErr) {
      // The error itself is too big for a frame (huge props, stack or name): send what surely fits.
      this.sendError(
        ctx,
        {
          name: wire.name.slice(0, 200),
          message: `${wire.message.slice(0, 2000)} (error details dropped: ${messageOf(encodeErr)})`,
        },
        rss,
      );
    }
    this.overLimit(rss);
  }

  private sendError(ctx: JobContext, wire: SerializedError, rss: number | null): void {
    this.channel.send([MessageType.RESULT_ERROR, ctx.seq, wire, rss, ctx.startedAt]);
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

/** False too when reading `then` throws (a Proxy's trap): the value then fails as a result that cannot be serialized. */
function isThenable(v: unknown): v is PromiseLike<unknown> {
  try {
    return (
      v !== null &&
      (typeof v === 'object' || typeof v === 'function') &&
      typeof (v as PromiseLike<unknown>).then === 'function'
    );
  } catch {
    return false;
  }
}

/**
 * A Retry, also from another copy of prefork (the parent revives it by name
 * and code, error-codec.ts); false when reading it throws (a Proxy's trap).
 */
function isRetry(v: unknown): boolean {
  try {
    if (v instanceof Retry) return true;
    return v instanceof Error && v.name === Retry.name && (v as { code?: unknown }).code === Retry.code;
  } catch {
    return false;
  }
}

/** `instanceof` without its throw: a Proxy's getPrototypeOf trap may throw. */
function isSoftTimeLimit(v: unknown): boolean {
  try {
    return v instanceof SoftTimeLimitExceeded;
  } catch {
    return false;
  }
}
