/**
 * The job and option types shared by the pool, the protocol, the tasks and
 * the brokers: their one home. Types only, importing nothing, so every layer
 * can use them without learning of another.
 */

/** How a failed job waits before its next attempt. */
export interface BackoffOptions {
  /** 'exponential' (default): delay × 2^attempt; 'fixed': delay every time. */
  type?: 'exponential' | 'fixed';
  /** Base delay in ms (default 1000). */
  delay?: number;
  /** Largest delay in ms (default 10 minutes). */
  cap?: number;
  /** Randomise each delay in [delay/2, delay] so retries of a burst spread out (default true for 'exponential', false for 'fixed'). */
  jitter?: boolean;
}

/** What a producer attaches to a job; stored with it and honoured by the worker. */
export interface JobOptions {
  /** Retries allowed after the first attempt (default 0). */
  retries?: number;
  backoff?: BackoffOptions;
  /** Do not store a result (no key is written). */
  ignoreResult?: boolean;
  /** Per-job hard / soft time limits in ms, overriding the worker's. */
  timeLimit?: number;
  softTimeLimit?: number;
}

/**
 * Per-task defaults, declared next to the task and sent to the parent with
 * WORKER_UP (the parent never loads the task module). A job's own options win.
 */
export interface TaskOptions {
  /** Retries after the first attempt (default 0). */
  retries?: number;
  /** Durations in ms. */
  backoff?: BackoffOptions;
  /** Hard / soft time limits, in ms. */
  timeLimit?: number;
  softTimeLimit?: number;
  /** Store no result for this task. */
  ignoreResult?: boolean;
}

/** An error as it crosses the pipe and as a result stores it: name, message, stack and own properties. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  props?: Record<string, unknown>;
}
