import { AsyncLocalStorage } from 'node:async_hooks';

export type TaskFunction = (...args: any[]) => unknown;

const REGISTRY = Symbol.for('prefork.taskRegistry');

/** What a task module's default export must be. */
export interface TaskRegistry {
  readonly [REGISTRY]: true;
  readonly tasks: ReadonlyMap<string, TaskFunction>;
}

/**
 * Declares the tasks of a task module: `export default defineTasks({ resize, parse })`.
 * Validated here so a typo fails at import in the child, with the task's name.
 */
export function defineTasks(tasks: Record<string, TaskFunction>): TaskRegistry {
  if (typeof tasks !== 'object' || tasks === null) {
    throw new TypeError(`defineTasks() expects an object of task functions, got ${typeof tasks}`);
  }
  const map = new Map<string, TaskFunction>();
  for (const [name, fn] of Object.entries(tasks)) {
    if (typeof fn !== 'function') throw new TypeError(`defineTasks(): task ${JSON.stringify(name)} is a ${typeof fn}, not a function`);
    map.set(name, fn);
  }
  return Object.freeze({ [REGISTRY]: true as const, tasks: map });
}

export function isTaskRegistry(value: unknown): value is TaskRegistry {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[REGISTRY] === true;
}

/** What `currentTask()` returns inside a running task. */
export interface TaskContext {
  readonly id: string;
  readonly name: string;
  readonly queue: string | undefined;
  readonly retries: number;
  /** Aborted when the job's soft time limit passes (or the worker is told to stop it). */
  readonly signal: AbortSignal;
}

// One store per process even if 'prefork' is loaded twice (the child's copy and
// the task module's copy must agree), hence a global symbol.
const STORE = Symbol.for('prefork.taskContextStore');
const globals = globalThis as unknown as Record<symbol, AsyncLocalStorage<TaskContext> | undefined>;
export const taskContextStore: AsyncLocalStorage<TaskContext> = (globals[STORE] ??= new AsyncLocalStorage<TaskContext>());

/** The running task's id, name, queue, retries and abort signal. Throws outside a task. */
export function currentTask(): TaskContext {
  const ctx = taskContextStore.getStore();
  if (ctx === undefined) throw new Error('currentTask() was called outside a running task');
  return ctx;
}
