import type { SerializedError, TaskOptions } from '../job-types.js';

/**
 * The parent ↔ child contract. Every frame body is a msgpack array whose first
 * element is the message type; tuples instead of objects keep the hot path
 * small on the wire and cheap to decode.
 */
export const MessageType = {
  // parent → child
  JOB: 1,
  SHUTDOWN: 2,
  SOFT_TIMEOUT: 3,
  WITHDRAW: 4,
  ABORT: 5,
  // child → parent
  WORKER_UP: 10,
  ACK: 11,
  RESULT_OK: 12,
  RESULT_ERROR: 13,
  INIT_ERROR: 14,
  WITHDRAWN: 15,
  PROGRESS: 16,
  DROPPED: 17,
} as const;
export type MessageType = (typeof MessageType)[keyof typeof MessageType];

/** What the child learns about a job besides its arguments (currentTask()). */
export interface JobMeta {
  id: string;
  queue?: string;
  retries?: number;
  /** The tick a periodic task's job stands for (epoch ms). */
  scheduledFor?: number;
}

/**
 * `args` is an array, or msgpack bytes of one that the child decodes (the parent never decodes a broker's payload).
 * `timeLimit`: the job's hard limit in ms, sent only when it has one; the child's watchdog enforces it as a backstop.
 */
export type JobFrame = [
  typeof MessageType.JOB,
  seq: number,
  name: string,
  args: unknown[] | Uint8Array,
  meta: JobMeta | null,
  timeLimit?: number,
];
export type ShutdownFrame = [typeof MessageType.SHUTDOWN];
export type SoftTimeoutFrame = [typeof MessageType.SOFT_TIMEOUT, seq: number];
/** Give back every job received and not started yet (warm stop, withdraw()). */
export type WithdrawFrame = [typeof MessageType.WITHDRAW];
/** Abort the running job's signal with `reason` (a revoke with terminate: the child is killed if the job goes on). */
export type AbortFrame = [typeof MessageType.ABORT, seq: number, reason: SerializedError];
export type ParentMessage = JobFrame | ShutdownFrame | SoftTimeoutFrame | WithdrawFrame | AbortFrame;

/** `options`: the per-task defaults declared with defineTasks, so the parent can honour them without loading user code. */
export type WorkerUpFrame = [
  typeof MessageType.WORKER_UP,
  pid: number,
  tasks: string[],
  /** [task name, its options] for each task declared with options. */
  options?: [name: string, options: TaskOptions][],
];
/**
 * A job started (epoch ms on the child's clock). Sent only when it rides with
 * the previous job's RESULT, or when the child has no start record: else the
 * start record says it (start-record.ts).
 */
export type AckFrame = [typeof MessageType.ACK, seq: number, startedAt?: number];
/**
 * `rss` is a number only when the parent asked for memory accounting.
 * `startedAt`: when the job started; a RESULT whose job the parent has not
 * seen start says so by itself.
 */
export type ResultOkFrame = [
  typeof MessageType.RESULT_OK,
  seq: number,
  value: unknown,
  rss?: number | null,
  startedAt?: number,
];
export type ResultErrorFrame = [
  typeof MessageType.RESULT_ERROR,
  seq: number,
  error: SerializedError,
  rss?: number | null,
  startedAt?: number,
];
export type InitErrorFrame = [typeof MessageType.INIT_ERROR, error: SerializedError];
/**
 * Jobs the child received and will not run: the ones it held when WITHDRAW
 * came, or a JOB that arrived after SHUTDOWN. They were never started.
 */
export type WithdrawnFrame = [typeof MessageType.WITHDRAWN, seqs: number[]];
/**
 * The running job reported progress (`currentTask().progress(value)`): any
 * msgpack value. The child sends at most one per job per PROGRESS_INTERVAL_MS,
 * and the last one before the job's RESULT.
 */
export type ProgressFrame = [typeof MessageType.PROGRESS, seq: number, value: unknown];
/**
 * Jobs the child received and did not start because the parent took them
 * back through the claim pipe (claim-pipe.ts). The parent writes it no job
 * until it has heard of every job it took.
 */
export type DroppedFrame = [typeof MessageType.DROPPED, seqs: number[]];
export type ChildMessage =
  | WorkerUpFrame
  | AckFrame
  | ResultOkFrame
  | ResultErrorFrame
  | InitErrorFrame
  | WithdrawnFrame
  | ProgressFrame
  | DroppedFrame;

/** Configuration handed to a child through its environment. */
export interface ChildConfig {
  app: string;
  maxFrameSize: number;
  reportMemory: boolean;
  /**
   * The pool's maxMemoryPerChild in bytes, if it has one: a child whose RSS after a job is above it runs no
   * other job (it gives back those it holds and exits), as the parent retires it on reading that RESULT.
   */
  memoryLimit?: number;
  /** The pool's process: the child's watchdog kills the child once it is gone. */
  parentPid: number;
  /** True when fd START_RECORD_FD holds the child's start record (start-record.ts); else every start is an ACK frame. */
  startRecord?: boolean;
  /** True when fd CLAIM_FD holds the child's claim pipe (claim-pipe.ts): it claims each job before starting it. */
  claims?: boolean;
  /** True when the kernel kills the child once the parent dies (death-signal.ts): its watchdog thread then starts only for a job with a hard time limit. */
  deathSignal?: boolean;
}

export const CHILD_CONFIG_ENV = 'PREFORK_CHILD_CONFIG';
