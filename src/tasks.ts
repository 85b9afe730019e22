import { AsyncLocalStorage } from 'node:async_hooks';
import { InvalidStateError, OptionError } from './errors.js';
import type { TaskOptions } from './job-types.js';
import { checkJobOptionFields, checkKnownKeys, type BackoffInput, type Bad } from './job-option-checks.js';

/**
 * A task: called in a child with the job's arguments (decoded from msgpack);
 * what it returns (or resolves with) is the job's result, what it throws
 * (or rejects with) the job's error.
 */
// any[]: a task declares its own parameter types, and (a: number) => x is not assignable to (...args: unknown[]) => x.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type TaskFunction = (...args: any[]) => unknown;

/** What a task definition may hold. */
const TASK_KEYS = new Set(['run', 'retries', 'backoff', 'timeLimit', 'softTimeLimit', 'ignoreResult', 'rateLimit']);

/** A task with options: `defineTasks({ resize: { run: resize, retries: 3, timeLimit: '1m' } })`. */
export interface TaskDefinition extends Omit<TaskOptions, 'backoff' | 'timeLimit' | 'softTimeLimit'> {
  /** The task function. */
  run: TaskFunction;
  /**
   * How a failed attempt waits before the next; durations in ms or strings like "30s".
   * @defaultValue exponential from 1 s, with jitter, capped at 10 minutes
   */
  backoff?: BackoffInput;
  /**
   * Hard time limit (ms or "30s", at most 2^31-1 ms: it runs as a timer):
   * past it the child is SIGKILLed and the attempt fails with TimeLimitExceeded.
   * @defaultValue the worker's (or pool's) `timeLimit`
   */
  timeLimit?: number | string;
  /**
   * Soft time limit (ms or "30s", less than `timeLimit`): past it
   * `currentTask().signal` aborts.
   * @defaultValue the worker's (or pool's) `softTimeLimit`
   */
  softTimeLimit?: number | string;
}

const REGISTRY = Symbol.for('prefork.taskRegistry');
/** Type only (never set): the task map as declared, so `Client<typeof tasks>` knows each task's types. */
declare const DECLARED: unique symbol;

/** What `defineTasks` takes: task functions, or `{ run, ...options }`, by name. */
export type TaskMap = Record<string, TaskFunction | TaskDefinition>;

/**
 * What a task module's default export must be.
 * @template T the task map as declared: `new Client<typeof tasks>()` and
 * `new Pool<typeof tasks>()` take each task's arguments and result from it
 */
export interface TaskRegistry<T extends TaskMap = TaskMap> {
  /** Marks a registry made by defineTasks (the child checks the module's default export for it). */
  readonly [REGISTRY]: true;
  /** The task functions, by task name. */
  readonly tasks: ReadonlyMap<string, TaskFunction>;
  /** The options of the tasks declared with some, by task name. */
  readonly options: ReadonlyMap<string, TaskOptions>;
  /** Types only, never set: the task map as declared. */
  readonly [DECLARED]?: T;
}

/**
 * Declares the tasks of a task module: `export default defineTasks({ resize, parse })`.
 * Validated here so a typo fails at import in the child, with the task's
 * name: throws OptionError for an entry that is not a function or
 * `{ run, ...options }`, or for a bad option.
 */
export function defineTasks<T extends TaskMap>(tasks: T): TaskRegistry<T> {
  if (typeof tasks !== 'object' || tasks === null) {
    throw new OptionError('tasks', tasks, 'an object of task functions', 'defineTasks()');
  }
  const map = new Map<string, TaskFunction>();
  const options = new Map<string, TaskOptions>();
  for (const [name, entry] of Object.entries(tasks)) {
    if (typeof entry === 'function') {
      map.set(name, entry);
      continue;
    }
    if (typeof entry !== 'object' || entry === null || typeof entry.run !== 'function') {
      throw new OptionError(name, entry, 'a task function, or { run: function, ...options }', 'defineTasks()');
    }
    map.set(name, entry.run);
    options.set(name, resolveTaskOptions(name, entry));
  }
  return Object.freeze({ [REGISTRY]: true as const, tasks: map, options });
}

function resolveTaskOptions(task: string, def: TaskDefinition): TaskOptions {
  const bad: Bad = (option, value, expected) => {
    throw new OptionError(option, value, expected, `defineTasks(): task ${JSON.stringify(task)}`);
  };
  checkKnownKeys(def, TASK_KEYS, 'task option', bad);
  // A task's ignoreResult is coerced (Boolean), not checked as a job's is: task modules relying on that keep loading.
  const { options } = checkJobOptionFields({ ...def, ignoreResult: undefined }, bad);
  const out: TaskOptions = options;
  if (def.ignoreResult !== undefined) out.ignoreResult = Boolean(def.ignoreResult);
  return out;
}

export function isTaskRegistry(value: unknown): value is TaskRegistry {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[REGISTRY] === true;
}

/** What `currentTask()` returns inside a running task. */
export interface TaskContext {
  /** The job's id (from the Client; with a bare Pool, ApplyOptions.id or the pool's sequence number). */
  readonly id: string;
  /** The task's name. */
  readonly name: string;
  /** The queue the job came from; undefined for a Pool.apply without `queue`. */
  readonly queue: string | undefined;
  /** Retries already spent: 0 on the first attempt. */
  readonly retries: number;
  /** Aborted when the job's soft time limit passes (or the worker is told to stop it). */
  readonly signal: AbortSignal;
  /**
   * Reports the job's progress: any value msgpack can carry (a number, an
   * object such as `{ done: 40, of: 100 }`). Stored with the job's result
   * record (`handle.progress()`, `prefork result`) by a Worker, passed to
   * `onProgress` by a bare Pool. Throttled: at most one report per job goes
   * out every 250 ms, each replacing the one still waiting, and the last one
   * always goes; call it as often as you like. Throws a TypeError for a value
   * that cannot be serialized, FrameTooLargeError for one too large.
   */
  progress(value: unknown): void;
  /** For a periodic task's job (`defineSchedule`): the tick it stands for, epoch ms on the broker's clock; else undefined. */
  readonly scheduledFor: number | undefined;
}

// One store per process even if 'prefork' is loaded twice (the child's copy and
// the task module's copy must agree), hence a global symbol.
const STORE = Symbol.for('prefork.taskContextStore');
const globals = globalThis as unknown as Record<symbol, AsyncLocalStorage<TaskContext> | undefined>;
export const taskContextStore: AsyncLocalStorage<TaskContext> = (globals[STORE] ??=
  new AsyncLocalStorage<TaskContext>());

/** The running task's context: its id, name, queue, retries, abort signal, progress() and scheduledFor. Throws InvalidStateError outside a task. */
export function currentTask(): TaskContext {
  const ctx = taskContextStore.getStore();
  if (ctx === undefined) throw new InvalidStateError('currentTask() was called outside a running task');
  return ctx;
}
