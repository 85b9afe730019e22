/**
 * The job and option types shared by the pool, the protocol, the tasks and
 * the brokers: their one home. Types only, importing nothing, so every layer
 * can use them without learning of another.
 */

/** How a failed job waits before its next attempt. */
export interface BackoffOptions {
  /**
   * 'exponential': delay × 2^attempt; 'fixed': delay every time.
   * @defaultValue 'exponential'
   */
  type?: 'exponential' | 'fixed';
  /**
   * Base delay in ms.
   * @defaultValue 1000
   */
  delay?: number;
  /**
   * Largest delay in ms.
   * @defaultValue 600000 (10 minutes), or `delay` when that is longer
   */
  cap?: number;
  /**
   * Randomise each delay in [delay/2, delay] so retries of a burst spread out.
   * @defaultValue true for 'exponential', false for 'fixed'
   */
  jitter?: boolean;
}

/** What a producer attaches to a job; stored with it and honoured by the worker. */
export interface JobOptions {
  /**
   * Retries allowed after the first attempt.
   * @defaultValue 0
   */
  retries?: number;
  /**
   * How a failed attempt waits before the next.
   * @defaultValue exponential from 1 s, with jitter, capped at 10 minutes
   */
  backoff?: BackoffOptions;
  /**
   * true: store no result (no key is written); false: store it even when
   * the task is defined with `ignoreResult`.
   * @defaultValue the task's own `ignoreResult`
   */
  ignoreResult?: boolean;
  /**
   * How long this job's results are kept, in whole ms (at most 100 years).
   * @defaultValue the worker's (its broker's) `resultTtl`
   */
  resultTtl?: number;
  /**
   * Per-job hard time limit in ms, overriding the worker's.
   * @defaultValue the worker's
   */
  timeLimit?: number;
  /**
   * Per-job soft time limit in ms, overriding the worker's.
   * @defaultValue the worker's
   */
  softTimeLimit?: number;
  /**
   * Most starts of this job's task, cluster-wide ("100/s", "10/m",
   * "1000/h"), spacing this job as that rate asks. A rate set at run time
   * (`prefork control rate-limit`) wins over it.
   * @defaultValue the task's own `rateLimit`, else none
   */
  rateLimit?: string;
}

/**
 * Per-task defaults, declared next to the task and sent to the parent with
 * WORKER_UP (the parent never loads the task module). A job's own options win.
 */
export interface TaskOptions {
  /**
   * Retries after the first attempt.
   * @defaultValue 0
   */
  retries?: number;
  /**
   * How a failed attempt waits before the next (durations in ms).
   * @defaultValue exponential from 1 s, with jitter, capped at 10 minutes
   */
  backoff?: BackoffOptions;
  /**
   * Hard time limit in ms.
   * @defaultValue the worker's
   */
  timeLimit?: number;
  /**
   * Soft time limit in ms.
   * @defaultValue the worker's
   */
  softTimeLimit?: number;
  /**
   * Keep neither value nor error of this task's jobs. A job that a Client
   * may wait for still gets a small record of its final state, so its
   * `result()` rejects at once with NoResultError; a job's own
   * `ignoreResult` (true or false) wins over this.
   * @defaultValue false
   */
  ignoreResult?: boolean;
  /**
   * Most starts of this task across every node together: "100/s", "10/m" or
   * "1000/h". Jobs over it wait in the broker (delayed to their turn), not
   * in a worker, and never hold back other tasks' jobs.
   * `prefork control rate-limit` changes it at run time.
   * @defaultValue none
   */
  rateLimit?: string;
}

/** An error as it crosses the pipe and as a result stores it: name, message, stack and own properties. */
export interface SerializedError {
  /** The error's class name, e.g. 'TypeError' (the parent rebuilds prefork's own classes from it). */
  name: string;
  /** The error's message. */
  message: string;
  /** The stack trace, when the error had one. */
  stack?: string;
  /** The error's own enumerable properties that msgpack can carry (e.g. `code`, `cause`). */
  props?: Record<string, unknown>;
}
