import type { JobMeta } from '../protocol/messages.js';

/** A job's arguments: an array, or a msgpack-encoded array passed through to the child untouched. */
export type JobArgs = unknown[] | Uint8Array;

/** Per-job options of `Pool.apply`; a bad or unknown one rejects the call with an OptionError. */
export interface ApplyOptions {
  /**
   * The job's id as the task sees it in `currentTask().id`.
   * @defaultValue the pool's sequence number for the job, as a string
   */
  id?: string;
  /**
   * The queue the job came from, as the task sees it in `currentTask().queue`.
   * @defaultValue undefined
   */
  queue?: string;
  /**
   * Retries already spent, as the task sees it in `currentTask().retries`.
   * @defaultValue 0
   */
  retries?: number;
  /**
   * The tick a periodic task's job stands for (epoch ms), as the task sees it in `currentTask().scheduledFor`.
   * @defaultValue undefined
   */
  scheduledFor?: number;
  /**
   * Hard time limit for this job (ms or "5s", at most 2^31-1 ms): past it the
   * child is SIGKILLed and the job rejects with TimeLimitExceeded.
   * @defaultValue the task's own (defineTasks), else the pool's `timeLimit`
   */
  timeLimit?: number | string;
  /**
   * Soft time limit for this job (ms or "5s", less than the hard one): past
   * it the job's AbortSignal aborts.
   * @defaultValue the task's own (defineTasks), else the pool's `softTimeLimit`
   */
  softTimeLimit?: number | string;
  /**
   * Called once the pool knows a child started the job, with the child's pid
   * and the epoch ms it started: at most 10 ms after the start, or just
   * before the job settles if it ends sooner. What it throws is logged and
   * ignored.
   * @defaultValue none
   */
  onStart?: (info: { pid: number; startedAt: number }) => void;
  /**
   * Called with each progress report the task makes
   * (`currentTask().progress(value)`): the value, and the epoch ms the parent
   * received it. The child throttles reports (at most one per job every
   * 250 ms, the last one always sent, before the job settles). What it throws
   * is logged and ignored.
   * @defaultValue none
   */
  onProgress?: (value: unknown, at: number) => void;
}

/** ApplyOptions after validation: time limits in ms. */
export type ResolvedApplyOptions = Omit<ApplyOptions, 'timeLimit' | 'softTimeLimit'> & {
  timeLimit?: number;
  softTimeLimit?: number;
};

/** The parent's record of one applied job, from apply() until it settles. */
export class PoolJob {
  /** 0 until the parent learns that a child started it (ACK, start record or RESULT); then the epoch ms it started. */
  startedAt = 0;
  /** Its start was announced: time limits armed if it runs, onStart called. */
  announced = false;
  /** An ACK frame named it (a second one breaks the protocol). */
  acked = false;
  /** Times it went back to the outbound buffer unstarted because its child died. */
  requeues = 0;
  settled = false;
  /** withdraw() asked for it back: if it comes back unstarted it is rejected with JobWithdrawnError, not run elsewhere. */
  withdrawing = false;
  /** cancel() stopped it: it rejects with this, whatever ends it (it comes back unstarted, or its child is killed). */
  cancelReason: Error | undefined;

  constructor(
    readonly seq: number,
    readonly name: string,
    readonly args: JobArgs,
    readonly meta: JobMeta | null,
    readonly options: ResolvedApplyOptions | undefined,
    readonly resolve: (value: unknown) => void,
    readonly reject: (err: Error) => void,
  ) {}

  get id(): string {
    return this.meta?.id ?? String(this.seq);
  }
}
