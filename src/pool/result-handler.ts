import { ProtocolError } from '../errors.js';
import { deserializeError } from '../protocol/error-codec.js';
import {
  MessageType,
  type AckFrame,
  type ChildMessage,
  type InitErrorFrame,
  type ResultErrorFrame,
  type ResultOkFrame,
  type WithdrawnFrame,
  type WorkerUpFrame,
} from '../protocol/messages.js';
import type { SerializedError, TaskOptions } from '../job-types.js';
import type { PoolJob } from './job.js';
import type { WorkerProcess } from './worker-process.js';

export interface ResultHooks {
  onWorkerUp(proc: WorkerProcess, tasks: string[], options: Record<string, TaskOptions>): void;
  onInitError(proc: WorkerProcess, err: SerializedError): void;
  onStarted(proc: WorkerProcess, job: PoolJob): void;
  onSettled(proc: WorkerProcess, job: PoolJob, ok: boolean, outcome: unknown, rss: number | undefined): void;
  /** The child gave these jobs back unstarted (WITHDRAW, or a JOB after SHUTDOWN). */
  onWithdrawn(proc: WorkerProcess, jobs: PoolJob[]): void;
}

type Handler<M> = (proc: WorkerProcess, msg: M) => void;

/**
 * Child → parent: checks each decoded frame against what the parent knows
 * (results come back in the order jobs were written) and settles jobs.
 * Anything unexpected is a ProtocolError: the pool replaces that child.
 */
export class ResultHandler {
  private readonly handlers = {
    [MessageType.WORKER_UP]: (proc, msg) => {
      const tasks = msg[2];
      if (!Array.isArray(tasks) || proc.state !== 'starting')
        throw new ProtocolError(`unexpected WORKER_UP from child ${proc.pid}`);
      const options = msg[3];
      this.hooks.onWorkerUp(proc, tasks.map(String), typeof options === 'object' && options !== null ? options : {});
    },
    [MessageType.ACK]: (proc, msg) => {
      const job = this.expectHead(proc, msg[1], 'ACK');
      if (job.startedAt !== 0) throw new ProtocolError(`child ${proc.pid} acknowledged job ${msg[1]} twice`);
      job.startedAt = Date.now();
      this.hooks.onStarted(proc, job);
    },
    [MessageType.RESULT_OK]: (proc, msg) => {
      const job = this.takeHead(proc, msg[1]);
      this.hooks.onSettled(proc, job, true, msg[2], msg[3]);
    },
    [MessageType.RESULT_ERROR]: (proc, msg) => {
      const wire = msg[2];
      if (typeof wire !== 'object' || wire === null || typeof wire.message !== 'string') {
        throw new ProtocolError(`child ${proc.pid} sent a RESULT_ERROR without an error`);
      }
      const job = this.takeHead(proc, msg[1]);
      this.hooks.onSettled(proc, job, false, deserializeError(wire), msg[3]);
    },
    [MessageType.INIT_ERROR]: (proc, msg) => {
      this.hooks.onInitError(proc, msg[1]);
    },
    [MessageType.WITHDRAWN]: (proc, msg) => {
      this.hooks.onWithdrawn(proc, proc.takeWithdrawn(msg[1]));
    },
  } satisfies {
    [MessageType.WORKER_UP]: Handler<WorkerUpFrame>;
    [MessageType.ACK]: Handler<AckFrame>;
    [MessageType.RESULT_OK]: Handler<ResultOkFrame>;
    [MessageType.RESULT_ERROR]: Handler<ResultErrorFrame>;
    [MessageType.INIT_ERROR]: Handler<InitErrorFrame>;
    [MessageType.WITHDRAWN]: Handler<WithdrawnFrame>;
  };

  constructor(private readonly hooks: ResultHooks) {}

  handle(proc: WorkerProcess, msg: ChildMessage): void {
    const handler = this.handlers[msg[0]] as Handler<ChildMessage> | undefined;
    if (handler === undefined)
      throw new ProtocolError(`child ${proc.pid} sent an unknown message type ${String(msg[0])}`);
    handler(proc, msg);
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

  private takeHead(proc: WorkerProcess, seq: unknown): PoolJob {
    const job = this.expectHead(proc, seq, 'RESULT');
    proc.inFlight.shift();
    if (job.startedAt === 0) job.startedAt = Date.now();
    return job;
  }
}
