import type { ResultRecord, StepFailure, WorkflowRecord } from '../broker/types.js';

export type {
  StepFailure,
  StepOutcome,
  WorkflowNodeRecord,
  WorkflowRecord,
  WorkflowRef,
  WorkflowState,
} from '../broker/types.js';

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

/** A job's failure as its workflow keeps it (and an onError callback receives it): its error's name, message and code. */
export function stepFailure(id: string, task: string, err: Error): StepFailure {
  const code = (err as { code?: unknown }).code;
  const error: StepFailure['error'] = { name: err.name, message: err.message };
  if (typeof code === 'string') error.code = code;
  return { id, name: task, error };
}
