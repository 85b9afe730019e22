// Public exports only: the engine lives in its own modules.
export { defineTasks, currentTask, type TaskContext, type TaskFunction, type TaskRegistry } from './tasks.js';
export { Pool, type PoolEvents, type ProcessUpEvent, type ProcessDownEvent, type JobLostEvent } from './pool/pool.js';
export type { PoolOptions, StrategyName } from './pool/options.js';
export type { ApplyOptions, JobArgs } from './pool/job.js';
export type { PoolStats, ProcessStats, PoolTotals } from './pool/stats.js';
export type { ScaleEvent } from './pool/autoscaler.js';
export * from './errors.js';
