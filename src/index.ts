// The public API and the error classes. The broker SPI (createBroker, the
// Broker roles and their records) is 'prefork/broker'; the engine lives in
// its own modules.
export {
  defineTasks,
  currentTask,
  type TaskContext,
  type TaskFunction,
  type TaskRegistry,
  type TaskDefinition,
  type TaskMap,
} from './tasks.js';
export type { TaskName, TaskArgs, TaskResult, ArgsThenOptions } from './task-types.js';
export {
  Pool,
  type PoolEvents,
  type ProcessUpEvent,
  type ProcessDownEvent,
  type JobLostEvent,
  type ResizeEvent,
  type CancelledJobs,
  type AutoscaleBounds,
} from './pool/pool.js';
export type { PoolOptions, StrategyName } from './pool/options.js';
export type { ApplyOptions, JobArgs } from './pool/job.js';
export type { PoolStats, ProcessStats, PoolTotals } from './pool/stats.js';
export type { PoolJobs, PoolJobInfo } from './pool/job-list.js';
export type { ProcessState } from './pool/worker-process.js';
export type { ExitReason } from './pool/exit-reason.js';
export type { ScaleEvent } from './pool/autoscaler.js';
export { Worker, type WorkerStats, type WorkerEvents, type WorkerFailure, type StopOptions } from './worker.js';
export type { WorkerOptions, WorkerBroker } from './worker-options.js';
export type { ConsumerCounts } from './consumer/consumer.js';
export type { SettleBatchCounts } from './consumer/acker.js';
export type { JobLogLevel } from './consumer/job-log.js';
export {
  Client,
  JobHandle,
  type ClientOptions,
  type ClientBroker,
  type EnqueueOptions,
  type EnqueueItem,
  type RevokeJobOptions,
  type ProgressReport,
  type UniqueOptions,
} from './client.js';
export type { BackoffInput } from './job-option-checks.js';
export { WorkflowHandle, type WorkflowClient, type WorkflowReader } from './workflow/handle.js';
export { task, chain, group, chord } from './workflow/parts.js';
export type { Signature, Chain, Group, Chord, SignatureOptions, WorkflowPart } from './workflow/parts.js';
export type { WorkflowView, WorkflowNodeView, WorkflowNodeState } from './workflow/view.js';
export type { WorkflowState, StepFailure } from './workflow/record.js';
export type { WorkflowNodeKind } from './workflow/compile.js';
export type { TaskOptions, BackoffOptions, JobOptions } from './job-types.js';
export type { JobState, ResultRecord, RevokeOutcome, RevokedJob } from './broker/types.js';
export type { QueueOrder, QueueSpec } from './consumer/queue-selection.js';
export type { NodeEvent, NodeEventType, EventFilter } from './events/node-event.js';
export type { EventsOptions } from './events/follow.js';
export type { EndpointUrls } from './observe/node-endpoints.js';
export type { HealthReport } from './observe/node-health.js';
export {
  defineSchedule,
  type Schedule,
  type ScheduleEntry,
  type ScheduleEntryInput,
  type ScheduleJobOptions,
  type Misfire,
} from './schedule/define.js';
export type { TickRule } from './schedule/ticks.js';
export * from './error-classes.js';
export type { EnqueueItemOutcome } from './errors.js';
