import { RevokedError, revokedMessage } from '../errors.js';
import type { SerializedError } from '../job-types.js';
import { isFinalState } from './job-state.js';
import type {
  ControlRequest,
  JobRecord,
  ResultRecord,
  RevokeOptions,
  RevokeOutcome,
  WorkflowNodeRecord,
  WorkflowRecord,
} from './types.js';

/**
 * What both brokers' `revoke` share: the outcome for a job from what was
 * found of it, the REVOKED record stored at once (so `state()` and
 * `result()` tell the truth before any node hears of it), and the control
 * request that tells every live node.
 */

/** A revoke's grace period when not given (terminate): a task that watches its signal has time to stop cleanly. */
export const DEFAULT_REVOKE_GRACE_MS = 5_000;

/** The outcome when the stored result is final already, else undefined (the job is revoked). */
export function finishedOutcome(id: string, stored: ResultRecord | undefined): RevokeOutcome | undefined {
  if (stored === undefined || !isFinalState(stored.state)) return undefined;
  // Revoked before: saying so again changes nothing.
  if (stored.state === 'REVOKED') return { id, outcome: 'revoked', state: 'REVOKED' };
  return { id, outcome: 'finished', state: stored.state };
}

/**
 * A revoked job's RevokedError in wire form, as serializeError writes one but
 * with no stack: made for each job a revoke takes (thousands for a
 * workflow), an Error's stack cost more than the rest of the revoke's work
 * in the process, named only prefork's own frames, and was most of the
 * bytes of each stored result. The client that reads it gets a RevokedError
 * with its own stack.
 */
export function revokedError(id: string): SerializedError {
  return { name: RevokedError.name, message: revokedMessage(id), props: { code: RevokedError.code, jobId: id } };
}

/** The REVOKED record of a job, from its stored result or its queued entry (whichever is known). */
function revokedRecord(
  id: string,
  stored: ResultRecord | undefined,
  job: JobRecord | undefined,
  now: number,
): ResultRecord {
  const record: ResultRecord = {
    id,
    task: job?.task ?? stored?.task ?? '',
    queue: job?.queue ?? stored?.queue ?? '',
    state: 'REVOKED',
    error: revokedError(id),
    retries: job?.attempt ?? stored?.retries ?? 0,
    finishedAt: now,
  };
  const enqueuedAt = job?.enqueuedAt ?? stored?.enqueuedAt;
  if (enqueuedAt !== undefined) record.enqueuedAt = enqueuedAt;
  return record;
}

/**
 * The members a revoke of a workflow's id revokes: every job of it that has
 * not ended, callbacks included (a revoked workflow runs nothing more of its
 * own). Those waiting are taken out and fail in it, those held by a node are
 * revoked as any held job, and those not started yet (a chain's later steps,
 * a chord's callback: in no queue) are remembered, so the node that fetches
 * one when its turn comes skips it. A workflow that has ended may still run
 * callbacks (a failed step's onError, the last step's onSuccess, and theirs):
 * then the members revoked are those placed (waiting or held) and the
 * callbacks that may follow them; the steps it skipped never start.
 */
export function workflowMembers(record: WorkflowRecord): WorkflowNodeRecord[] {
  const nodes = record.nodes ?? [];
  const open = (n: WorkflowNodeRecord | undefined): n is WorkflowNodeRecord =>
    n !== undefined && n.jobId !== undefined && n.ended === undefined;
  if (record.state === 'PENDING') return nodes.filter(open);
  const live = new Set<number>();
  const follow = (index: number): void => {
    const node = nodes[index];
    if (!open(node) || live.has(index)) return;
    live.add(index);
    follow(node.onSuccess);
    follow(node.onError);
  };
  for (const node of nodes) if (node.placed === true) follow(node.index);
  return nodes.filter((n) => live.has(n.index));
}

/** The REVOKED record of a workflow member not started yet: in no queue, it is known by the workflow's record only. */
function unstartedRecord(member: WorkflowNodeRecord, now: number): ResultRecord {
  const record = revokedRecord(member.jobId ?? '', undefined, undefined, now);
  record.task = member.task ?? '';
  record.queue = member.queue ?? '';
  return record;
}

/**
 * The REVOKED record to store for `id`, from what was found of it: its stored result or its entry, else
 * (`unstarted`) the workflow member it is, not started yet; undefined when nothing is known of it.
 */
export function recordToRevoke(
  id: string,
  stored: ResultRecord | undefined,
  job: JobRecord | undefined,
  unstarted: WorkflowNodeRecord | undefined,
  now: number,
): ResultRecord | undefined {
  if (stored !== undefined || job !== undefined) return revokedRecord(id, stored, job, now);
  return unstarted === undefined ? undefined : unstartedRecord(unstarted, now);
}

/**
 * A revoke of a workflow member's own id (`index`: the node its id names,
 * member-id.ts) as its workflow's record says: the member to revoke as a
 * revoke of the workflow would (it may still run), or the outcome when it
 * never will (it ended, its result not kept; or its workflow skipped it).
 * Undefined when the record does not list `id` at `index`.
 */
export function stepToRevoke(
  record: WorkflowRecord,
  id: string,
  index: number,
): { member: WorkflowNodeRecord } | { outcome: RevokeOutcome } | undefined {
  const node = record.nodes?.[index];
  if (node === undefined || node.jobId !== id) return undefined;
  if (workflowMembers(record).some((m) => m.index === index)) return { member: node };
  const outcome: RevokeOutcome = { id, outcome: 'finished', workflow: record.id };
  if (node.ended !== undefined) outcome.state = node.ended.ok ? 'SUCCESS' : 'FAILURE';
  return { outcome };
}

/**
 * The outcome of a revoke of a workflow step by its own id, naming its
 * workflow; `unstarted` when the revoke found it nowhere (it names the
 * workflow of a job it found): in no queue yet.
 */
export function stepOutcome(outcome: RevokeOutcome, workflowId: string): RevokeOutcome {
  if (outcome.outcome === 'revoked' && outcome.workflow === undefined && outcome.state === undefined)
    outcome.unstarted = true;
  outcome.workflow = workflowId;
  return outcome;
}

/**
 * Whether a revoke of a workflow member revoked it now, for the workflow's
 * `members` count: not one revoked before (`before`: its id was in the
 * revoked set already; a second revoke counts nothing), nor one known to be
 * running (STARTED) when not terminated, which runs on and whose own result
 * replaces REVOKED. A REVOKED state alone says nothing: told of this
 * revoke, a node may settle a member it holds before the member is looked at.
 */
export function revokedNow(outcome: RevokeOutcome, options: RevokeOptions, before: boolean): boolean {
  if (outcome.outcome !== 'revoked' || before) return false;
  return outcome.state !== 'STARTED' || options.terminate;
}

/** What a revoke of a workflow's id says: how many members it revoked, or finished when it had ended with none left to run. */
export function workflowOutcome(record: WorkflowRecord, members: number): RevokeOutcome {
  if (record.state !== 'PENDING' && members === 0) return { id: record.id, outcome: 'finished', state: record.state };
  return { id: record.id, outcome: 'revoked', workflow: record.id, members };
}

/** The control request that tells a node of revoked ids: [terminate, grace, expiresAt, ...ids]. */
export function revokeRequest(
  requestId: string,
  ids: readonly string[],
  options: RevokeOptions,
  expiresAt: number,
): ControlRequest {
  return { id: requestId, command: 'revoke', args: [options.terminate ? 1 : 0, options.grace, expiresAt, ...ids] };
}

/** How long a revoke request waits in a node's control list: past it, a node that did not take it has lost its lease (and reloads the set when it registers again). */
export function revokeRequestTtl(leaseMs: number): number {
  return 2 * leaseMs;
}
