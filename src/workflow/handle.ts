import type { BrokerResults, ResultRecord, RevokeOutcome, WorkflowRecord } from '../broker/types.js';
import type { RevokeJobOptions } from '../revoke-job-options.js';
import { JobFailedError } from '../errors.js';
import { throwOptionError, waitTimeout } from '../job-option-checks.js';
import { deserializeError } from '../protocol/error-codec.js';
import { groupFailure, jobsToRead, workflowView, type WorkflowView } from './view.js';

/** What reading a workflow needs of the broker: its record and its jobs' results. */
export type WorkflowReader = Pick<BrokerResults, 'getWorkflow' | 'getResult' | 'getResults'>;

/** What a WorkflowHandle needs of its client: a Client is one. */
export interface WorkflowClient {
  /** The client's broker. */
  readonly broker: WorkflowReader;
  /** Resolves with the workflow's final record (see `Client.waitForResult`). */
  waitForWorkflow(id: string, timeout: number | string | undefined): Promise<ResultRecord>;
  /** The workflow's state and tree. */
  getWorkflowState(id: string): Promise<WorkflowView | undefined>;
  /** Revokes a job or a workflow (see `Client.revoke`). */
  revoke(id: string, options?: RevokeJobOptions): Promise<RevokeOutcome>;
}

/**
 * A workflow that was enqueued (a chain, group or chord): its id, its result
 * once its last step ended, and its tree of steps.
 * @template T what the workflow resolves with (its last step's result; a group's: the list of its members')
 */
export class WorkflowHandle<T = unknown> {
  /** Made by `Client.enqueue`, not by hand. */
  constructor(
    /** The workflow's id (`prefork result <id>` shows its tree). */
    readonly id: string,
    private readonly client: WorkflowClient,
  ) {}

  /**
   * Resolves with the workflow's result: a chain's last step's, a group's
   * list of its members' (in member order), a chord's callback's. Rejects
   * when a step failed for good: with that step's error when it was a step
   * of a chain, with a WorkflowError (naming the member, with every member's
   * state and value or error) when it failed in a group or a chord; with
   * ResultTimeoutError past `timeout` (ms or "30s"), ResultGoneError once its
   * records expired, ClientClosedError on close().
   */
  async result<U = T>(options: { timeout?: number | string } = {}): Promise<NoInfer<U>> {
    const record = await this.client.waitForWorkflow(this.id, waitTimeout(options, throwOptionError));
    if (record.state === 'SUCCESS') return record.value as NoInfer<U>;
    throw await workflowFailure(this.client.broker, this.id, record);
  }

  /**
   * The workflow's state and its tree, each node with its state (a job's,
   * or WAITING / SKIPPED), value or error; undefined when the broker knows
   * nothing of it (or its records expired with the result TTL).
   */
  state(): Promise<WorkflowView | undefined> {
    return this.client.getWorkflowState(this.id);
  }

  /**
   * Revokes the workflow: each of its jobs that has not ended is revoked
   * (callbacks included). Those waiting are taken out and fail in it at
   * once, those not started yet (a chain's later steps, a chord's callback)
   * never run, and a running one runs on unless `terminate` (see
   * `Client.revoke`). `result()` then rejects with the first revoked step's
   * RevokedError (in a group, a WorkflowError naming it). A workflow that
   * ended may still run callbacks (a failed step's onError, the last step's
   * onSuccess): those, and the callbacks after them, are revoked too.
   * Resolves with `members`, how many this call revoked (not those revoked
   * before, nor a running one, STARTED, without `terminate`), or
   * `finished` when it had ended with nothing of it left to run.
   */
  revoke(options: RevokeJobOptions = {}): Promise<RevokeOutcome> {
    return this.client.revoke(this.id, options);
  }
}

/** A workflow's state and tree: its record, and the stored results of its jobs that have not ended or were revoked. */
export async function readWorkflowView(broker: WorkflowReader, id: string): Promise<WorkflowView | undefined> {
  const record = await broker.getWorkflow(id);
  return record === undefined ? undefined : viewOf(broker, record);
}

/** The view of a record already read: the stored results of its unended and revoked jobs refine their state. */
async function viewOf(broker: WorkflowReader, record: WorkflowRecord): Promise<WorkflowView> {
  const ids = jobsToRead(record);
  const stored = ids.length === 0 ? [] : await broker.getResults(ids, { jobsOnly: true });
  const results = new Map<string, ResultRecord>();
  stored.forEach((r, i) => {
    if (r !== undefined) results.set(ids[i] as string, r);
  });
  return workflowView(record, results);
}

/**
 * The error a failed workflow's handle rejects with: a WorkflowError when
 * it failed in a group (or a chord), else the failed step's own error.
 */
export async function workflowFailure(broker: WorkflowReader, id: string, record: ResultRecord): Promise<Error> {
  const fallback = (): Error => (record.error ? deserializeError(record.error) : new JobFailedError(id));
  const flow = await broker.getWorkflow(id).catch(() => undefined);
  if (flow?.failure === undefined) return fallback();
  const view = await viewOf(broker, flow).catch(() => undefined);
  const inGroup = view === undefined ? undefined : groupFailure(view, flow);
  if (inGroup !== undefined) return inGroup;
  // A chain step failed: its own error, whole (stack and properties) when its result is kept. Only a
  // final one: a RETRY record is an attempt's (the step may then have been taken out, or its final
  // result not written yet), and says nothing of how the step ended.
  const [step] = await broker.getResults([flow.failure.id], { jobsOnly: true }).catch(() => []);
  const final = step?.state === 'FAILURE' || step?.state === 'REVOKED';
  if (final && step.error !== undefined && step.error.name === flow.failure.error.name)
    return deserializeError(step.error);
  return fallback();
}
