/**
 * The light entry for task modules: `import { defineTasks } from 'prefork/task'`.
 * A task module is loaded in every child; importing the whole package there
 * would also load the pool, the worker, the client, the brokers and pino
 * into each child for nothing. This entry reaches only tasks.ts (and
 * units.ts) and errors.ts, which import no package.
 */
export {
  defineTasks,
  currentTask,
  type TaskContext,
  type TaskFunction,
  type TaskRegistry,
  type TaskDefinition,
  type TaskMap,
} from './tasks.js';
export type { TaskName, TaskArgs, TaskResult } from './task-types.js';
export type { TaskOptions } from './job-types.js';
export * from './error-classes.js';
