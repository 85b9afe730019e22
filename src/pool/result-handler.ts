import { JobWithdrawnError, PoolClosedError, PoolFailedError, ProtocolError, RemoteTaskError } from '../errors.js';
import { deserializeError } from '../protocol/error-codec.js';
import {
  MessageType,
  type AckFrame,
  type ChildMessage,
  type DroppedFrame,
  type InitErrorFrame,
  type ProgressFrame,
  type ResultErrorFrame,
  type ResultOkFrame,
  type WithdrawnFrame,
  type WorkerUpFrame,
} from '../protocol/messages.js';
import type { SerializedError, TaskOptions } from '../job-types.js';
import type { PoolJob } from './job.js';
import type { WorkerProcess } from './worker-process.js';

export interface ResultHooks {
  onWorkerUp(proc: WorkerProcess, tasks: string[], options: ReadonlyMap<string, TaskOptions>): void;
  onInitError(proc: WorkerProcess, err: SerializedError): void;
  /** The job at the head of the child's in-flight list started (an ACK frame said so). */
  onStarted(proc: WorkerProcess, job: PoolJob): void;
  /** `rss`: what the child reported, a number only under memory accounting. */
  onSettled(proc: WorkerProcess, job: PoolJob, ok: boolean, outcome: unknown, rss: unknown): void;
  /** The running job at the head of the child's in-flight list reported progress. */
  onProgress(proc: WorkerProcess, job: PoolJob, value: unknown): void;
  /** The child gave these jobs back unstarted (WITHDRAW, or a JOB after SHUTDOWN). */
  onWithdrawn(proc: WorkerProcess, jobs: PoolJob[]): void;
  /** The child dropped jobs the parent had taken back (the claim pipe): it may get jobs again once it dropped them all. */
  onDropped(proc: WorkerProcess): void;
}

type Handler<M> = (proc: WorkerProcess, msg: M) => void;

/**
 * Child → parent: checks each decoded frame against what the parent knows
 * (results come back in the order jobs were written) and settles jobs.
 * Anything unexpected is a ProtocolError: the pool replaces that child.
 * A job leaves its child's in-flight list only on the way to being settled,
 * after every check that can throw, so a bad frame never strands a job.
 */
export class ResultHandler {
  private readonly handlers = new Map<number, Handler<ChildMessage>>();

  constructor(private readonly hooks: ResultHooks) {
    this.on<WorkerUpFrame>(MessageType.WORKER_UP, (proc, msg) => {
      const tasks = msg[2];
      // Killed while it booted (procAliveTimeout, a stop): a WORKER_UP already on its way is late, not wrong.
      if (proc.killed) return;
      if (!Array.isArray(tasks) || proc.state !== 'starting')
        throw new ProtocolError(`unexpected WORKER_UP from child ${proc.pid}`);
      this.hooks.onWorkerUp(proc, tasks.map(String), taskOptions(msg[3]));
    });
    this.on<AckFrame>(MessageType.ACK, (proc, msg) => {
      // Its RESULT came first (it carried the start): nothing left to say.
      if (msg[1] === proc.lastSettledSeq && proc.inFlight.peek()?.seq !== msg[1]) return;
      const job = this.expectHead(proc, msg[1], 'ACK');
      if (job.acked) throw new ProtocolError(`child ${proc.pid} acknowledged job ${msg[1]} twice`);
      job.acked = true;
      // The start record may have told it already; the ACK then only confirms it.
      if (job.startedAt === 0) job.startedAt = startTime(msg[2]);
      if (!job.announced) this.hooks.onStarted(proc, job);
    });
    this.on<ResultOkFrame>(MessageType.RESULT_OK, (proc, msg) => {
      const job = this.takeHead(proc, msg[1], msg[4]);
      this.hooks.onSettled(proc, job, true, msg[2], msg[3]);
    });
    this.on<ResultErrorFrame>(MessageType.RESULT_ERROR, (proc, msg) => {
      const wire = msg[2];
      if (typeof wire !== 'object' || wire === null || typeof wire.message !== 'string') {
        throw new ProtocolError(`child ${proc.pid} sent a RESULT_ERROR without an error`);
      }
      // Rebuilt before the job is taken (deserializeError never throws, whatever the error's name).
      const error = taskError(deserializeError(wire));
      const job = this.takeHead(proc, msg[1], msg[4]);
      this.hooks.onSettled(proc, job, false, error, msg[3]);
    });
    this.on<InitErrorFrame>(MessageType.INIT_ERROR, (proc, msg) => {
      this.hooks.onInitError(proc, msg[1]);
    });
    this.on<ProgressFrame>(MessageType.PROGRESS, (proc, msg) => {
      // Only the running job reports: it is the head (jobs run in the order they were written).
      this.hooks.onProgress(proc, this.expectHead(proc, msg[1], 'PROGRESS'), msg[2]);
    });
    this.on<WithdrawnFrame>(MessageType.WITHDRAWN, (proc, msg) => {
      this.hooks.onWithdrawn(proc, proc.takeWithdrawn(msg[1]));
    });
    this.on<DroppedFrame>(MessageType.DROPPED, (proc, msg) => {
      proc.takeDropped(msg[1]);
      this.hooks.onDropped(proc);
    });
  }

  handle(proc: WorkerProcess, msg: ChildMessage): void {
    const handler = this.handlers.get(msg[0]);
    if (handler === undefined)
      throw new ProtocolError(`child ${proc.pid} sent an unknown message type ${String(msg[0])}`);
    handler(proc, msg);
  }

  private on<M extends ChildMessage>(type: M[0], handler: Handler<M>): void {
    this.handlers.set(type, handler as Handler<ChildMessage>);
  }

  private expectHead(proc: WorkerProcess, seq: unknown, what: string): PoolJob {
    const job = proc.inFlight.peek();
    if (job === undefined || job.seq !== seq) {
      throw new ProtocolError(
        `child ${proc.pid} sent ${what} for job ${String(seq)}, expected ${job === undefined ? 'nothing' : job.seq}`,
      );
    }
    return job;
  }

  /** A RESULT implies its job's start, which the parent may not have seen: the frame carries the time. */
  private takeHead(proc: WorkerProcess, seq: unknown, startedAt: unknown): PoolJob {
    const job = this.expectHead(proc, seq, 'RESULT');
    proc.inFlight.shift();
    proc.lastSettledSeq = job.seq;
    if (job.startedAt === 0) job.startedAt = startTime(startedAt);
    return job;
  }
}

/** The start time a child sent (epoch ms), or now when it sent none that makes sense. */
function startTime(sent: unknown): number {
  return typeof sent === 'number' && Number.isFinite(sent) && sent > 0 ? sent : Date.now();
}

/** WORKER_UP's [name, options] pairs as a Map; a pair that is not one is skipped (the task runs with the defaults). */
function taskOptions(pairs: unknown): Map<string, TaskOptions> {
  const out = new Map<string, TaskOptions>();
  if (!Array.isArray(pairs)) return out;
  for (const pair of pairs) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'string') continue;
    const options: unknown = pair[1];
    if (typeof options === 'object' && options !== null) out.set(pair[0], options);
  }
  return out;
}

/**
 * The pool's own signals about a job (withdrawn, pool closed, pool failed)
 * send it back to its queue unfailed. Thrown by a task they are only the
 * task's failure: rebuilt as a RemoteTaskError, so the job fails as any other.
 */
function taskError(err: Error): Error {
  if (!(err instanceof JobWithdrawnError || err instanceof PoolClosedError || err instanceof PoolFailedError))
    return err;
  const own = new RemoteTaskError(err.message);
  Object.defineProperties(own, Object.getOwnPropertyDescriptors(err));
  return own;
}
