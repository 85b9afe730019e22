/**
 * What `Client.enqueue` takes for one job: its options, and the signature
 * (`task(name, args?, options?)`) that describes a job to enqueue alone, as a
 * step of a workflow, or as another job's callback. One module, as the
 * options name signatures (onSuccess, onError) and a signature holds options.
 */
import type { BackoffInput } from './job-option-checks.js';
import { OptionError } from './errors.js';

/** Per-job options of `Client.enqueue`; a bad or unknown one throws an OptionError naming it. */
export interface EnqueueOptions {
  /**
   * The queue the job goes to (letters, digits, "_", "-" or ".").
   * @defaultValue `"default"`
   */
  queue?: string;
  /**
   * Run after this long (ms or "30s", up to 100 years); the job waits in the
   * broker, not in a worker. Counted on the broker's clock (Redis TIME), so
   * a client whose clock is off does not shift it.
   * @defaultValue none: the job is ready at once
   */
  delay?: number | string;
  /**
   * Run at this time (a Date or epoch ms). Absolute: compared with the
   * broker's clock (Redis TIME), so it is off by however far this machine's
   * clock is from the Redis server's. Prefer `delay` for "in N seconds".
   * Not with `delay` (an OptionError: one of them would be ignored).
   * @defaultValue none: the job is ready at once
   */
  eta?: Date | number;
  /**
   * Retries after the first attempt.
   * @defaultValue the task's own (defineTasks), else 0 (3 when the task throws Retry, as Celery)
   */
  retries?: number;
  /**
   * How retries wait: `{ type, delay, cap, jitter }`, durations in ms or strings like "30s".
   * @defaultValue the task's own, else exponential from 1 s, with jitter, capped at 10 minutes
   */
  backoff?: BackoffInput;
  /**
   * Your own job id (non-empty, well-formed Unicode: a lone surrogate is
   * refused, Redis would store it as U+FFFD). Enqueuing an id again while its job waits,
   * is delayed or runs, or after it ended while its result is kept, adds
   * nothing: you get that job's handle (`duplicate: true`).
   * @defaultValue a random UUID
   */
  id?: string;
  /**
   * One job at a time per key: while a job with the same key waits, is
   * delayed or runs, enqueueing another adds nothing and returns that job's
   * handle (`duplicate: true`). `true`: the key is the task name and the
   * arguments (as encoded); `{ key }`: your own key (any non-empty string of
   * well-formed Unicode, no lone surrogate; it cannot clash with prefork's keys); `{ ttl }` (ms or "10m"): the key is
   * also released after this long, even if the job has not ended. The key
   * is released when the job ends (succeeds or fails for good).
   * @defaultValue false
   */
  unique?: boolean | UniqueOptions;
  /**
   * true: store no result (`result()` then rejects with NoResultError at
   * once, and the job costs Redis no result write); false: store it even
   * when the task is defined with `ignoreResult`. Left out, a task defined
   * with `ignoreResult` records only the job's final state, so `result()`
   * rejects with NoResultError once the job ends.
   * @defaultValue the task's own `ignoreResult`, else false
   */
  ignoreResult?: boolean;
  /**
   * How long this job's results are kept (ms or "1h", up to 100 years),
   * instead of the client's or the worker's `resultTtl`. Unused with
   * `ignoreResult: true`.
   * @defaultValue the client's `resultTtl`, else the worker's (1 day unless set)
   */
  resultTtl?: number | string;
  /**
   * Hard time limit for this job (ms or "30s", at most 2^31-1 ms: it runs as
   * a timer): past it the child is SIGKILLed and the attempt fails with TimeLimitExceeded.
   * @defaultValue the task's own, else the worker's `timeLimit`
   */
  timeLimit?: number | string;
  /**
   * Soft time limit for this job (ms or "30s", less than `timeLimit`): past
   * it the task's AbortSignal aborts.
   * @defaultValue the task's own, else the worker's `softTimeLimit`
   */
  softTimeLimit?: number | string;
  /**
   * Most starts of this job's task across every node ("100/s", "10/m",
   * "1000/h"): the job waits in the broker for its turn. A rate set with
   * `prefork control rate-limit` wins over it.
   * @defaultValue the task's own `rateLimit`, else none
   */
  rateLimit?: string;
  /**
   * A job enqueued when this one succeeds, with its result as first
   * argument (`task(name, args?, options?)`): atomically with the job's final
   * result, once. Not with `id` or `unique`.
   * @defaultValue none
   */
  onSuccess?: Signature;
  /**
   * A job enqueued when this one fails for good (retries spent; revoked,
   * while it runs or while it waits; buried as a poison job, its nodes dead),
   * with `{ id, name, error: { name, message, code } }` as first argument:
   * atomically with the step that ends the job (its node's settlement, its
   * removal from its queue, its recovery), once. Not with `id` or `unique`.
   * @defaultValue none
   */
  onError?: Signature;
}

/** The `unique` enqueue option in its long form. */
export interface UniqueOptions {
  /**
   * The key that makes jobs duplicates of each other.
   * @defaultValue the task name and the arguments
   */
  key?: string;
  /**
   * Release the key after this long (ms or "10m") even if the job has not ended.
   * @defaultValue none: the key is held until the job ends
   */
  ttl?: number | string;
}

/**
 * The enqueue options of one step of a workflow: a job's own, plus
 * `immutable`. `id` and `unique` are refused in a workflow step (the step's
 * job is made when the step before it ends).
 */
export interface SignatureOptions extends EnqueueOptions {
  /**
   * true: the step ignores the result of the step before it (it is not
   * prepended to its arguments).
   * @defaultValue false
   */
  immutable?: boolean;
}

/** A description of one job: a task's name, its arguments and its enqueue options (`task(...)`). Immutable. */
export class Signature {
  /** What this part is. */
  readonly kind = 'task';
  /** Made by `task()`. */
  constructor(
    /** The task's name. */
    readonly name: string,
    /** Its arguments (the previous step's result, if any, goes in front of them). */
    readonly args: readonly unknown[],
    /** Its enqueue options. */
    readonly options: Readonly<SignatureOptions>,
  ) {
    Object.freeze(this);
  }
}

/**
 * A signature: the description of one job, to enqueue alone or as a step of
 * a workflow. The task need not be known here (it may live on other nodes);
 * the options are checked when it is enqueued.
 */
export function task(name: string, args: readonly unknown[] = [], options: SignatureOptions = {}): Signature {
  if (typeof name !== 'string' || name === '') throw new OptionError('task name', name, 'a non-empty task name');
  if (!Array.isArray(args)) throw new OptionError(`task("${name}") args`, args, 'an array of arguments');
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new OptionError(`task("${name}") options`, options, 'an object');
  if (options.immutable !== undefined && typeof options.immutable !== 'boolean')
    throw new OptionError(`task("${name}") immutable`, options.immutable, 'true or false');
  return new Signature(name, Object.freeze([...(args as readonly unknown[])]), Object.freeze({ ...options }));
}
