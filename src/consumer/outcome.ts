import type { Delivery, ResultRecord, Settlement } from '../broker/types.js';
import {
  JobWithdrawnError,
  MalformedJobError,
  MaxRetriesExceededError,
  OptionError,
  PayloadDecodeError,
  PoolClosedError,
  PoolFailedError,
  ResultSerializationError,
  Retry,
  RevokedError,
  UnknownTaskError,
  messageOf,
} from '../errors.js';
import { serializeError } from '../protocol/error-codec.js';
import type { TaskOptions } from '../job-types.js';
import { clampDelay } from '../job-option-checks.js';
import { ARGS_KEPT_MAX } from '../protocol/job-args.js';
import { backoffDelay } from './backoff.js';
import { inResult } from '../util/cut-text.js';
import { stepFailure, type StepOutcome } from '../workflow/record.js';

/** Celery's default max_retries: a task that throws Retry with no retries configured still gets this many. */
export const DEFAULT_RETRY_BUDGET = 3;

/** What the Consumer knows about one attempt when it settles. */
export interface Attempt {
  node: string;
  pid: number | undefined;
  startedAt: number | undefined;
  finishedAt: number;
  task: TaskOptions | undefined;
}

/** Errors that no retry can fix: the job goes to the dead set at once. */
function isPermanent(err: unknown): boolean {
  return (
    err instanceof UnknownTaskError || err instanceof PayloadDecodeError || err instanceof ResultSerializationError
  );
}

/**
 * What a job's results keep: `all` (every state, with value or error),
 * `state` (only the final state, marked `ignoreResult`: the task ignores
 * results but a Client may wait for this job) or `none` (nothing is written).
 * The job's own ignoreResult wins over the task's.
 */
export type ResultKeeping = 'all' | 'state' | 'none';

export function resultKeeping(delivery: Delivery, task: TaskOptions | undefined): ResultKeeping {
  const { job } = delivery;
  const ignore = job.options.ignoreResult ?? task?.ignoreResult ?? false;
  if (!ignore) return 'all';
  // A job without replyTo has no waiter to tell: nothing to write.
  return job.options.ignoreResult === undefined && job.replyTo !== undefined ? 'state' : 'none';
}

/** The final record as `keep` allows: whole, its state alone, or none. */
export function finalRecord(
  keep: ResultKeeping,
  delivery: Delivery,
  attempt: Attempt,
  state: 'SUCCESS' | 'FAILURE' | 'REVOKED',
  outcome: () => Pick<ResultRecord, 'value' | 'error'>,
): ResultRecord | undefined {
  if (keep === 'none') return undefined;
  if (keep === 'all') return record(delivery, attempt, state, outcome());
  return { ...record(delivery, attempt, state, {}, false), ignoreResult: true };
}

/**
 * The job's fate after the pool settled it (docs/failure-modes.md):
 * success → ack; withdrawn, pool closed or pool failed → back to the queue
 * (the job is not at fault: a failed pool kills the children it runs on);
 * Retry or a failure with retries left → delayed retry; else FAILURE and the
 * dead set. A retry delay that is not a number (a bad Retry delay or backoff)
 * cannot be scheduled: FAILURE naming it. Pure, so every row is a table test.
 */
export function settlementFor(
  delivery: Delivery,
  ok: boolean,
  outcome: unknown,
  attempt: Attempt,
  random?: () => number,
): Settlement {
  const { job } = delivery;
  const keep = resultKeeping(delivery, attempt.task);
  if (ok)
    return withOutcome(
      { kind: 'ack', delivery, result: finalRecord(keep, delivery, attempt, 'SUCCESS', () => ({ value: outcome })) },
      outcome,
    );
  if (outcome instanceof RevokedError) return revokedSettlement(keep, delivery, attempt, outcome);
  if (outcome instanceof JobWithdrawnError || outcome instanceof PoolClosedError || outcome instanceof PoolFailedError)
    return { kind: 'giveBack', delivery };
  const failure = finalRecord(keep, delivery, attempt, 'FAILURE', () => ({ error: serializeError(outcome) }));
  if (isPermanent(outcome))
    return withOutcome({ kind: 'dead', delivery, reason: messageOf(outcome), result: failure }, outcome);
  const retries = job.options.retries ?? attempt.task?.retries ?? (outcome instanceof Retry ? DEFAULT_RETRY_BUDGET : 0);
  if (job.attempt < retries) {
    let delay: number;
    try {
      delay =
        outcome instanceof Retry && outcome.delay !== undefined
          ? clampDelay(outcome.delay, 'Retry.delay')
          : backoffDelay(job.attempt, job.options.backoff ?? attempt.task?.backoff, random);
    } catch (err) {
      if (!(err instanceof OptionError)) throw err;
      const reason = `the retry cannot be scheduled: ${err.message}`;
      return withOutcome(
        {
          kind: 'dead',
          delivery,
          reason,
          result: finalRecord(keep, delivery, attempt, 'FAILURE', () => ({ error: serializeError(err) })),
        },
        err,
      );
    }
    return {
      kind: 'retry',
      delivery,
      delay,
      // Not final: a record of the state alone tells a waiter nothing.
      result: keep === 'all' ? record(delivery, attempt, 'RETRY', { error: serializeError(outcome) }) : undefined,
    };
  }
  const reason = retries > 0 ? `retries spent (${retries}): ${messageOf(outcome)}` : messageOf(outcome);
  if (!(outcome instanceof Retry)) return withOutcome({ kind: 'dead', delivery, reason, result: failure }, outcome);
  // A Retry with none left fails as MaxRetriesExceededError (Celery's), not as a Retry: a task that awaits
  // this job and lets its error through would otherwise ask to be retried in turn.
  const spent = new MaxRetriesExceededError(reason, { cause: outcome });
  const result = finalRecord(keep, delivery, attempt, 'FAILURE', () => ({ error: serializeError(spent) }));
  return withOutcome({ kind: 'dead', delivery, reason, result }, spent);
}

/**
 * A final settlement of a workflow's job carries how the job ended (the
 * workflow records it whatever the job's ignoreResult says); others are left as they are.
 */
export function withOutcome<S extends Settlement & { kind: 'ack' | 'dead' }>(s: S, outcome: unknown): S {
  if (s.delivery.job.workflow === undefined) return s;
  s.outcome = stepOutcome(s, outcome);
  return s;
}

function stepOutcome(s: Settlement & { kind: 'ack' | 'dead' }, outcome: unknown): StepOutcome {
  const { job } = s.delivery;
  if (outcomeOf(s, outcome) === 'succeeded') return { ok: true, value: outcome };
  const err = outcome instanceof Error ? outcome : new Error(messageOf(outcome));
  return { ok: false, failure: stepFailure(job.id, job.task, err) };
}

/**
 * Where a failed attempt's error is kept whole, for the marker of a message
 * a log line or an event cuts: the job's result when the settlement stores
 * one with the error (a retry's RETRY record lasts until the next attempt's),
 * else the dead set's reason for a job that failed for good (results ignored),
 * else nowhere.
 */
export function wholeErrorAt(s: Settlement): string | undefined {
  const { id } = s.delivery.job;
  if ((s.kind === 'retry' || s.kind === 'dead') && s.result?.error !== undefined) return inResult(id);
  return s.kind === 'dead' ? `the dead set's reason: prefork dead list --json` : undefined;
}

/** How a settled job ended, as metrics and events name it (undefined: not an outcome, e.g. a progress record). */
export type JobOutcome = 'succeeded' | 'failed' | 'retried' | 'given_back' | 'revoked';

export function outcomeOf(s: Settlement, outcome: unknown): JobOutcome | undefined {
  switch (s.kind) {
    case 'ack':
      // A revoked job is settled as an ack (it is done), with a REVOKED record.
      return outcome instanceof RevokedError || s.result?.state === 'REVOKED' ? 'revoked' : 'succeeded';
    case 'dead':
      return 'failed';
    case 'retry':
      return 'retried';
    case 'giveBack':
      return 'given_back';
    default:
      return undefined;
  }
}

/** A revoked job, skipped when fetched or stopped while it ran: done, REVOKED, never retried. */
export function revokedSettlement(
  keep: ResultKeeping,
  delivery: Delivery,
  attempt: Attempt,
  error: RevokedError = new RevokedError(delivery.job.id),
): Settlement {
  return withOutcome(
    {
      kind: 'ack',
      delivery,
      result: finalRecord(keep, delivery, attempt, 'REVOKED', () => ({ error: serializeError(error) })),
    },
    error,
  );
}

/** A delivery the broker could not read: straight to the dead set, with a FAILURE result naming why. */
export function malformedSettlement(delivery: Delivery, node: string): Settlement {
  const reason = `malformed job: ${delivery.malformed ?? 'unreadable entry'}`;
  const result = record(
    delivery,
    { node, pid: undefined, startedAt: undefined, finishedAt: Date.now(), task: undefined },
    'FAILURE',
    { error: serializeError(new MalformedJobError(reason)) },
  );
  return withOutcome({ kind: 'dead', delivery, reason, result }, new MalformedJobError(reason));
}

/** A job's result record; `withArgs` keeps its arguments (the payload, as is: never decoded here) when they are small enough. */
export function record(
  delivery: Delivery,
  attempt: Attempt,
  state: ResultRecord['state'],
  outcome: Pick<ResultRecord, 'value' | 'error'>,
  withArgs = true,
): ResultRecord {
  const { job } = delivery;
  const out: ResultRecord = {
    id: job.id,
    task: job.task,
    queue: delivery.queue,
    state,
    node: attempt.node,
    retries: job.attempt,
    enqueuedAt: job.enqueuedAt,
    finishedAt: attempt.finishedAt,
    ...outcome,
  };
  if (withArgs) {
    if (job.payload.byteLength <= ARGS_KEPT_MAX) out.payload = job.payload;
    else out.payloadBytes = job.payload.byteLength;
  }
  if (attempt.pid !== undefined) out.pid = attempt.pid;
  if (attempt.startedAt !== undefined) {
    out.startedAt = attempt.startedAt;
    out.runtime = attempt.finishedAt - attempt.startedAt;
  }
  return out;
}
