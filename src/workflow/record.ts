import type { ResultRecord, WorkflowRecord } from '../broker/types.js';

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
