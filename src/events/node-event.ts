import { oneLine } from '../util/one-line.js';

/**
 * What a node reports as it works: job events (a job's life on this node)
 * and pool and node events. Each names its node and carries only what its
 * type needs; `at` is the node's clock (epoch ms).
 */
export type NodeEventType =
  | 'job-received'
  | 'job-started'
  | 'job-progress'
  | 'job-succeeded'
  | 'job-failed'
  | 'job-retried'
  | 'job-lost'
  | 'job-revoked'
  | 'job-given-back'
  | 'job-deferred'
  | 'process-up'
  | 'process-down'
  | 'scale-up'
  | 'scale-down'
  | 'pool-failed'
  | 'node-online'
  | 'node-offline'
  | 'node-fenced';

export const NODE_EVENT_TYPES: readonly NodeEventType[] = [
  'job-received',
  'job-started',
  'job-progress',
  'job-succeeded',
  'job-failed',
  'job-retried',
  'job-lost',
  'job-revoked',
  'job-given-back',
  'job-deferred',
  'process-up',
  'process-down',
  'scale-up',
  'scale-down',
  'pool-failed',
  'node-online',
  'node-offline',
  'node-fenced',
];

/** One event, as `prefork events --json` prints it and `client.events()` yields it. */
export interface NodeEvent {
  /** What happened. */
  type: NodeEventType;
  /** Epoch ms on the node's clock. */
  at: number;
  /** The node's name. */
  node: string;
  /** Job events: the job's id. */
  jobId?: string;
  /** Job events: the task's name. */
  task?: string;
  /** Job events: the queue it was fetched from. */
  queue?: string;
  /** Job events: retries spent before this attempt. */
  attempt?: number;
  /** The child's process id (job-started and after, process-up/down). */
  pid?: number;
  /** job-succeeded, job-failed, job-retried: ms from start to outcome (undefined when it never started). */
  runtimeMs?: number;
  /** job-progress: the value the task reported (`currentTask().progress(value)`); past 1,024 characters or bytes, a string saying it was cut and where the whole is (the job's result, unless results are ignored). */
  progress?: unknown;
  /** job-retried: when the next attempt is due (epoch ms, the node's clock). */
  retryAt?: number;
  /** job-deferred: when the job, sent back to wait for its rate-limit turn, is due again (epoch ms, the node's clock). */
  dueAt?: number;
  /** job-failed, job-retried, pool-failed: what went wrong; a name or message past 1,024 characters is cut, saying so and where the whole is (the job's result; with results ignored, a final failure's dead-set reason). */
  error?: { name: string; message: string };
  /** job-lost, process-down: the child's exit code (null when a signal ended it). */
  exitCode?: number | null;
  /** job-lost, process-down: the signal that ended the child, or null. */
  signal?: string | null;
  /** process-down: why (retired, died, time-limit, protocol-error, killed). */
  reason?: string;
  /** scale-up, scale-down: children before. */
  from?: number;
  /** scale-up, scale-down: children after. */
  to?: number;
}

/** Which events a reader wants: all that match every given field. */
export interface EventFilter {
  /** Only events of this task. */
  task?: string;
  /** Only events of this node (its name). */
  node?: string;
  /** Only these types. */
  types?: readonly NodeEventType[];
}

export function matches(e: NodeEvent, filter: EventFilter): boolean {
  if (filter.task !== undefined && e.task !== filter.task) return false;
  if (filter.node !== undefined && e.node !== filter.node) return false;
  if (filter.types !== undefined && !filter.types.includes(e.type)) return false;
  return true;
}

/** One readable line: time, node, type, then what the type carries (control characters escaped). */
export function describeEvent(e: NodeEvent): string {
  const time = new Date(e.at).toISOString();
  const job = e.jobId === undefined ? '' : ` ${e.task ?? '?'}[${e.jobId}]`;
  const parts: string[] = [];
  if (e.queue !== undefined && e.type === 'job-received') parts.push(`queue ${e.queue}`);
  if (e.attempt !== undefined && e.attempt > 0 && e.type === 'job-received') parts.push(`attempt ${e.attempt + 1}`);
  if (e.runtimeMs !== undefined) parts.push(`in ${e.runtimeMs} ms`);
  if (e.pid !== undefined) parts.push(`pid ${e.pid}`);
  if (e.retryAt !== undefined) parts.push(`retry at ${new Date(e.retryAt).toISOString()}`);
  if (e.dueAt !== undefined) parts.push(`rate limit: due at ${new Date(e.dueAt).toISOString()}`);
  if (e.reason !== undefined) parts.push(e.reason);
  if (e.exitCode !== undefined && e.exitCode !== null) parts.push(`exit code ${e.exitCode}`);
  if (e.signal !== undefined && e.signal !== null) parts.push(`signal ${e.signal}`);
  if (e.from !== undefined && e.to !== undefined) parts.push(`${e.from} -> ${e.to} processes`);
  if (e.error !== undefined) parts.push(`${e.error.name}: ${e.error.message}`);
  // Names and messages come from tasks and other writers: one event, one line.
  return oneLine(`${time} ${e.node} ${e.type}${job}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`);
}
