import type { JobMeta } from '../protocol/messages.js';

/** A job's arguments: an array, or a msgpack-encoded array passed through to the child untouched. */
export type JobArgs = unknown[] | Uint8Array;

/** Per-job options of `Pool.apply`. */
export interface ApplyOptions {
  /** The job's id as the task sees it in currentTask() (default: the pool's sequence number). */
  id?: string;
  /** The queue the job came from, for currentTask(). */
  queue?: string;
  /** Retries already spent, for currentTask(). */
  retries?: number;
  /** Override the pool's hard time limit for this job (ms, or a string like "5s"). */
  timeLimit?: number | string;
  /** Override the pool's soft time limit for this job (ms, or a string like "5s"). */
  softTimeLimit?: number | string;
  /** Called when a child starts the job (its ACK arrived). */
  onStart?: (info: { pid: number; startedAt: number }) => void;
}

/** ApplyOptions after validation: time limits in ms. */
export type ResolvedApplyOptions = Omit<ApplyOptions, 'timeLimit' | 'softTimeLimit'> & {
  timeLimit?: number;
  softTimeLimit?: number;
};

/** The parent's record of one applied job, from apply() until it settles. */
export class PoolJob {
  /** 0 until a child ACKs it; then the epoch ms it started. */
  startedAt = 0;
  /** Times it went back to the outbound buffer unstarted because its child died. */
  requeues = 0;
  settled = false;
  /** withdraw() asked for it back: if it comes back unstarted it is rejected with JobWithdrawnError, not run elsewhere. */
  withdrawing = false;

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
