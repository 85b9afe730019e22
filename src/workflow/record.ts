import type { ResultRecord } from '../broker/types.js';
import type { WorkflowNodeKind } from './compile.js';

/** Where a job sits in a workflow: carried in its entry, so whoever settles it knows what comes next. */
export interface WorkflowRef {
  /** The workflow's id. */
  id: string;
  /** The job's node in the workflow. */
  node: number;
  /** The workflow's queues (the next steps may go to any of them). */
  queues: readonly string[];
}

/** A step that failed for good, as the workflow keeps it (and as an onError callback receives it). */
export interface StepFailure {
  /** The failed job's id. */
  id: string;
  /** Its task's name. */
  name: string;
  /** What it threw. */
  error: { name: string; message: string; code?: string };
}

/** How a workflow's job (or a node) ended for good. */
export type StepOutcome = { ok: true; value: unknown } | { ok: false; failure: StepFailure };

/** A workflow's state: `PENDING` until its root ends. */
export type WorkflowState = 'PENDING' | 'SUCCESS' | 'FAILURE';

/** One node of a workflow as the broker keeps it. */
export interface WorkflowNodeRecord {
  /** Its index (the root is 0). */
  index: number;
  kind: WorkflowNodeKind;
  /** The parent's index; -1 for the root and for callbacks. */
  parent: number;
  /** Place among the parent's children. */
  pos: number;
  /** First child (-1 for a task). */
  first: number;
  /** Number of children. */
  count: number;
  /** task: its job's id. */
  jobId?: string;
  /** task: the task's name. */
  task?: string;
  /** task: its queue. */
  queue?: string;
  /** task: the node of its onSuccess callback, or -1. */
  onSuccess: number;
  /** task: the node of its onError callback, or -1. */
  onError: number;
  /** How it ended, once it did. */
  ended?: StepOutcome;
  /** task: its job waits, is delayed or is held by a node now. */
  placed?: boolean;
}

/** A workflow as `getWorkflow` reads it. */
export interface WorkflowRecord {
  id: string;
  state: WorkflowState;
  /** The root's value (SUCCESS). */
  value?: unknown;
  /** The step whose failure ended it (FAILURE). */
  failure?: StepFailure;
  /** The outermost group the failure went through (undefined: a chain step failed outside any group). */
  failedGroup?: number;
  /** Every node (read only when asked for). */
  nodes?: WorkflowNodeRecord[];
}

/** A workflow's outcome as a result record (`getResult` of its id, task `workflow`). */
export function workflowResult(record: WorkflowRecord): ResultRecord {
  const out: ResultRecord = { id: record.id, task: 'workflow', queue: '', state: record.state, retries: 0 };
  if (record.state === 'SUCCESS') out.value = record.value;
  if (record.failure !== undefined) {
    const { error } = record.failure;
    out.error = { name: error.name, message: error.message };
    if (error.code !== undefined) out.error.props = { code: error.code };
  }
  return out;
}
