import type { JobState, ResultRecord } from '../broker/types.js';
import { WorkflowError, type WorkflowMemberState } from '../errors.js';
import type { WorkflowNodeKind } from './compile.js';
import type { StepFailure, WorkflowNodeRecord, WorkflowRecord, WorkflowState } from './record.js';

/**
 * A node's state: a job's (PENDING waiting in its queue, RECEIVED, STARTED,
 * RETRY, SUCCESS, FAILURE, REVOKED: failed in its workflow as revoked, with
 * its RevokedError); WAITING: not started yet (the steps
 * before it have not ended); SKIPPED: it never will (a step before it
 * failed). A chain, group or chord: PENDING until it ends, then SUCCESS or FAILURE.
 */
export type WorkflowNodeState = JobState | 'WAITING' | 'SKIPPED';

/** One node of a workflow's tree (`handle.state()`, `prefork result <id>`). */
export interface WorkflowNodeView {
  /** A task (one job), or how its children run. */
  kind: WorkflowNodeKind;
  /** Where it is (see WorkflowNodeState). */
  state: WorkflowNodeState;
  /** task: its job's id. */
  id?: string;
  /** task: the task's name. */
  task?: string;
  /** task: its queue. */
  queue?: string;
  /** What it returned (SUCCESS). */
  value?: unknown;
  /** What it threw (FAILURE): name, message, code. */
  error?: StepFailure['error'];
  /** chain: its steps; group: its members; chord: its group and its callback. */
  children?: WorkflowNodeView[];
  /** task: its onSuccess callback. */
  onSuccess?: WorkflowNodeView;
  /** task: its onError callback. */
  onError?: WorkflowNodeView;
}

/** A workflow's state and its tree. */
export interface WorkflowView {
  /** The workflow's id. */
  id: string;
  /** PENDING until its last step ends. */
  state: WorkflowState;
  /** Its result (SUCCESS). */
  value?: unknown;
  /** The job whose failure failed it (FAILURE). */
  failure?: StepFailure;
  /** The root of its tree. */
  tree: WorkflowNodeView;
}

/** The tree of a workflow record, with the stored results of its jobs that have not ended (by job id). */
export function workflowView(record: WorkflowRecord, results: ReadonlyMap<string, ResultRecord>): WorkflowView {
  const nodes = record.nodes ?? [];
  const over = record.state !== 'PENDING';
  const build = (index: number, skipped: boolean): WorkflowNodeView => {
    const node = nodes[index] as WorkflowNodeRecord;
    const view: WorkflowNodeView = { kind: node.kind, state: 'PENDING' };
    if (node.jobId !== undefined) view.id = node.jobId;
    if (node.task !== undefined) view.task = node.task;
    if (node.queue !== undefined) view.queue = node.queue;
    if (node.ended !== undefined) {
      view.state = node.ended.ok ? 'SUCCESS' : 'FAILURE';
      if (node.ended.ok) view.value = node.ended.value;
      else view.error = node.ended.failure.error;
      // A revoked job failed in its workflow, and its own state says REVOKED: so does its node.
      if (!node.ended.ok && node.jobId !== undefined && results.get(node.jobId)?.state === 'REVOKED')
        view.state = 'REVOKED';
    } else if (node.kind === 'task') {
      const stored = node.jobId === undefined ? undefined : results.get(node.jobId);
      if (stored !== undefined) view.state = stored.state;
      else if (node.placed === true) view.state = 'PENDING';
      else view.state = skipped || over ? 'SKIPPED' : 'WAITING';
    } else if (skipped || over) view.state = 'SKIPPED';
    if (node.count > 0) {
      view.children = [];
      for (let k = 0; k < node.count; k++) view.children.push(build(node.first + k, skipped));
    }
    if (node.onSuccess >= 0) view.onSuccess = build(node.onSuccess, node.ended !== undefined && !node.ended.ok);
    if (node.onError >= 0) view.onError = build(node.onError, node.ended !== undefined && node.ended.ok);
    return view;
  };
  const view: WorkflowView = { id: record.id, state: record.state, tree: build(0, false) };
  if (record.state === 'SUCCESS') view.value = record.value;
  if (record.failure !== undefined) view.failure = record.failure;
  return view;
}

/**
 * The job ids whose stored results refine their nodes' state: the task nodes
 * that have not ended, and those that failed with a RevokedError (REVOKED
 * when their own result says so; a task may throw another job's RevokedError).
 */
export function jobsToRead(record: WorkflowRecord): string[] {
  const ids: string[] = [];
  for (const node of record.nodes ?? []) {
    if (node.jobId === undefined) continue;
    const ended = node.ended;
    if (ended === undefined || (!ended.ok && ended.failure.error.name === 'RevokedError')) ids.push(node.jobId);
  }
  return ids;
}

/** The WorkflowError of a workflow that failed in a group: the member that failed, and each member of the group. */
export function groupFailure(view: WorkflowView, record: WorkflowRecord): WorkflowError | undefined {
  if (record.failedGroup === undefined || record.failure === undefined) return undefined;
  const group = findNode(view.tree, record.nodes ?? [], record.failedGroup);
  const members: WorkflowMemberState[] = (group?.children ?? []).map((child) => {
    const m: WorkflowMemberState = { kind: child.kind, state: child.state };
    if (child.id !== undefined) m.id = child.id;
    if (child.task !== undefined) m.task = child.task;
    if (child.state === 'SUCCESS') m.value = child.value;
    if (child.error !== undefined) m.error = child.error;
    return m;
  });
  const { id, name, error } = record.failure;
  return new WorkflowError(record.id, { id, task: name, error }, members);
}

/** The view of node `index`, found by the path from the root. */
function findNode(
  root: WorkflowNodeView,
  nodes: readonly WorkflowNodeRecord[],
  index: number,
): WorkflowNodeView | undefined {
  const path: number[] = [];
  for (let i = index; i > 0; i = nodes[i]?.parent ?? 0) {
    const node = nodes[i];
    if (node === undefined || node.parent < 0) return undefined;
    path.unshift(node.pos);
  }
  let view: WorkflowNodeView | undefined = root;
  for (const pos of path) view = view?.children?.[pos];
  return view;
}
