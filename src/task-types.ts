/**
 * How a task module's type reaches the producer: from `typeof tasks` (what
 * `defineTasks` returned) to each task's name, arguments and result. Types
 * only. An untyped registry (the default) maps to `string`, `unknown[]` and
 * `unknown`, so untyped code compiles as before.
 */
import type { TaskDefinition, TaskFunction, TaskMap, TaskRegistry } from './tasks.js';

/** The function behind a task entry: the entry itself, or its `run`. */
type RunOf<E> = E extends TaskFunction ? E : E extends TaskDefinition ? E['run'] : never;

/** The task map a registry was declared with. */
type MapOf<R> = R extends TaskRegistry<infer T> ? T : TaskMap;

/** The task names of a registry type. */
export type TaskName<R extends TaskRegistry> = Extract<keyof MapOf<R>, string>;

/** The arguments task `N` takes, as the array `enqueue` and `apply` send. */
export type TaskArgs<R extends TaskRegistry, N extends TaskName<R>> = Parameters<RunOf<MapOf<R>[N]>>;

/** What task `N` resolves with (its return value, awaited). */
export type TaskResult<R extends TaskRegistry, N extends TaskName<R>> = Awaited<ReturnType<RunOf<MapOf<R>[N]>>>;

/** `[args, options?]`, where args may be left out when the task can be called without any. */
export type ArgsThenOptions<A, O> = [] extends A ? [args?: A, options?: O] : [args: A, options?: O];
