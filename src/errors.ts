/**
 * The error catalogue: every error prefork raises is a PreforkError subclass
 * from this file with a stable `code` (static on the class, and on each
 * instance), so callers can branch on `err.code` and logs can be grepped
 * (Node's ERR_* convention). Errors that cross a pipe or Redis come back as
 * their own class (protocol/error-codec.ts). A task's own error is the one
 * exception: it comes back as RemoteTaskError with the task's name, message
 * and properties, and is no PreforkError, so `instanceof PreforkError` tells
 * prefork's failures from the task's.
 */
export class PreforkError extends Error {
  /** This class's code; every instance carries it as `code`. */
  static readonly code: string = 'PREFORK_ERROR';
  /** The stable code of the error's class (`ERR`-style, e.g. `PREFORK_TIME_LIMIT`). */
  readonly code: string;
  /** `cause`: the error behind this one, if any. */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = new.target.code;
  }
}

/** An option, argument or CLI value that is missing, unknown, of the wrong type or out of range. */
export class OptionError extends PreforkError {
  static override readonly code: string = 'PREFORK_BAD_OPTION';
  /** The option's name (for a nested one, its path: `backoff.delay`). */
  readonly option: string;
  /** The value that was refused. */
  readonly value: unknown;
  /** What the option takes, in words (the message's "expected ..."). */
  readonly expected: string;
  /** What was given the option, when the message names it (e.g. `defineTasks(): task "resize"`). */
  readonly where: string | undefined;
  /** `where` names what was given the option when the option's name alone does not (e.g. `defineTasks(): task "resize"`). */
  constructor(option: string, value: unknown, expected: string, where?: string) {
    super(
      `${where !== undefined ? `${where}: ` : ''}invalid option ${option}: ${describeValue(value)} (expected ${expected})`,
    );
    this.option = option;
    this.value = value;
    this.expected = expected;
    this.where = where;
  }
}

/** A call that the object's state does not allow (start() twice, currentTask() outside a task). */
export class InvalidStateError extends PreforkError {
  static override readonly code: string = 'PREFORK_INVALID_STATE';
}

/** The child running the job exited or was killed before it sent a result. */
export class WorkerLostError extends PreforkError {
  static override readonly code: string = 'PREFORK_WORKER_LOST';
  /** The child's exit code, or null when a signal ended it. */
  readonly exitCode: number | null;
  /** The signal that ended the child, or null. */
  readonly signal: NodeJS.Signals | null;
  /** The child's pid (undefined when it never started). */
  readonly pid: number | undefined;
  /** The child's pid, how it ended, and why the parent killed it (if it did). */
  constructor(pid: number | undefined, exitCode: number | null, signal: NodeJS.Signals | null, reason?: string) {
    const how = signal ? `signal ${signal}` : `exit code ${String(exitCode)}`;
    super(`worker process ${pid ?? '?'} exited with ${how} while running the job${reason ? ` (${reason})` : ''}`);
    this.exitCode = exitCode;
    this.signal = signal;
    this.pid = pid;
  }
}

/** Hard time limit: the child was SIGKILLed and replaced. */
export class TimeLimitExceeded extends PreforkError {
  static override readonly code: string = 'PREFORK_TIME_LIMIT';
  /** The hard time limit that ran out, in ms. */
  readonly limitMs: number;
  /** The limit in ms, and the task's name. */
  constructor(limitMs: number, task: string) {
    super(`task ${task} exceeded its hard time limit of ${limitMs} ms; its worker process was killed`);
    this.limitMs = limitMs;
  }
}

/** Soft time limit: raised inside the child through the job's AbortSignal. */
export class SoftTimeLimitExceeded extends PreforkError {
  static override readonly code: string = 'PREFORK_SOFT_TIME_LIMIT';
  /** The message names the task when the child raises it. */
  constructor(message = 'soft time limit exceeded') {
    super(message);
  }
}

/** The task name is not registered by the app's task module. */
export class UnknownTaskError extends PreforkError {
  static override readonly code: string = 'PREFORK_UNKNOWN_TASK';
  /** The task name that is not registered. */
  readonly task: string;
  /** The name asked for, and the registered names (listed in the message). */
  constructor(task: string, known?: readonly string[]) {
    const hint = known && known.length > 0 ? `; registered tasks: ${known.join(', ')}` : '';
    super(`unknown task ${JSON.stringify(task)}${hint}`);
    this.task = task;
  }
}

/** A task returned a value msgpack cannot carry (functions, cycles, symbols...). */
export class ResultSerializationError extends PreforkError {
  static override readonly code: string = 'PREFORK_RESULT_NOT_SERIALIZABLE';
  /** The task whose result could not be serialized. */
  readonly task: string;
  /** The task's name, and what the encoder threw. */
  constructor(task: string, cause: unknown) {
    super(`the result of task ${task} cannot be serialized: ${messageOf(cause)}`);
    this.task = task;
  }
}

/**
 * A task threw something that cannot be read (its name or message getter,
 * or a Proxy trap, throws): it stands in for what was thrown, saying why.
 * The task failed as with any error it throws (retried while retries remain).
 */
export class ErrorSerializationError extends PreforkError {
  static override readonly code: string = 'PREFORK_ERROR_NOT_SERIALIZABLE';
  /** The task that threw it; undefined for a task module that threw it as it loaded. */
  readonly task: string | undefined;
  /** The task's name (when known), and why what it threw cannot be read. */
  constructor(task: string | undefined, detail: string) {
    super(`${task === undefined ? 'the value thrown' : `the value task ${task} threw`} cannot be read: ${detail}`);
    this.task = task;
  }
}

/** A job's payload bytes are not a msgpack argument array; retrying cannot help. */
export class PayloadDecodeError extends PreforkError {
  static override readonly code: string = 'PREFORK_BAD_PAYLOAD';
  /** The task whose payload could not be decoded. */
  readonly task: string;
  /** The task's name, and what the decoder said. */
  constructor(task: string, detail: string) {
    super(`the payload of task ${task} cannot be decoded: ${detail}`);
    this.task = task;
  }
}

/** Job arguments the parent cannot encode for the pipe. */
export class ArgumentSerializationError extends PreforkError {
  static override readonly code: string = 'PREFORK_ARGS_NOT_SERIALIZABLE';
  /** The task's name, and what the encoder threw (also its `cause`). */
  constructor(task: string, cause: unknown) {
    super(`the arguments of task ${task} cannot be serialized: ${messageOf(cause)}`, { cause });
  }
}

/**
 * Job arguments too large for a child to receive (its `maxFrameSize`), or
 * for Redis to take in one value (its `proto-max-bulk-len`): refused at
 * enqueue, before anything of the call is sent.
 */
export class ArgumentsTooLargeError extends PreforkError {
  static override readonly code: string = 'PREFORK_ARGS_TOO_LARGE';
  /** The task the job was for. */
  readonly task: string;
  /** Bytes the job takes where it is bounded: its frame to a child, or its value at Redis. */
  readonly bytes: number;
  /** The bound it is over, in bytes. */
  readonly limit: number;
  /** Which bound: the workers' `maxFrameSize`, or Redis's `proto-max-bulk-len` (the largest value it takes). */
  readonly bound: 'maxFrameSize' | 'proto-max-bulk-len';
  /** The task's name, the job's size and the limit, in bytes, and which bound it is. */
  constructor(
    task: string,
    bytes: number,
    limit: number,
    bound: 'maxFrameSize' | 'proto-max-bulk-len' = 'maxFrameSize',
  ) {
    super(
      bound === 'maxFrameSize'
        ? `the arguments of task ${task} make a job of ${bytes} bytes, over the ${limit} bytes a child can receive (maxFrameSize)`
        : `the arguments of task ${task} make a job of ${bytes} bytes, over the ${limit} bytes Redis takes in one value (proto-max-bulk-len): nothing was enqueued`,
    );
    this.task = task;
    this.bytes = bytes;
    this.limit = limit;
    this.bound = bound;
  }
}

/** A queue entry the broker cannot read as a job (written by something else, or damaged): straight to the dead set. */
export class MalformedJobError extends PreforkError {
  static override readonly code: string = 'PREFORK_MALFORMED_JOB';
}

/** A child sent bytes that break the pipe protocol; the child is replaced. */
export class ProtocolError extends PreforkError {
  static override readonly code: string = 'PREFORK_PROTOCOL';
}

/** A frame above maxFrameSize: read from a child, a protocol error; to be written, the job fails with it. */
export class FrameTooLargeError extends ProtocolError {
  static override readonly code: string = 'PREFORK_FRAME_TOO_LARGE';
  /** The frame's size in bytes. */
  readonly size: number;
  /** The largest frame allowed (maxFrameSize), in bytes. */
  readonly max: number;
  /** The frame's size and the limit, in bytes. */
  constructor(size: number, max: number) {
    super(`frame of ${size} bytes exceeds the maximum of ${max} bytes (maxFrameSize)`);
    this.size = size;
    this.max = max;
  }
}

/** The task module could not be loaded in a child. */
export class AppLoadError extends PreforkError {
  static override readonly code: string = 'PREFORK_APP_LOAD';
  /** The task module's path, and what went wrong (with file and line when known). */
  constructor(app: string, detail: string) {
    super(`cannot load task module ${app}: ${detail}`);
  }
}

/**
 * The pool gave up: children keep dying before they can work (fork loop
 * guard). When they died of a task module that does not load, its
 * AppLoadError is the `cause`.
 */
export class PoolFailedError extends PreforkError {
  static override readonly code: string = 'PREFORK_POOL_FAILED';
}

/**
 * The Consumer's fetch loop failed on something other than the broker being
 * unreachable (a bug, a broker reply it cannot handle): nothing would fetch
 * any more, so the node stops and gives its jobs back. `cause` is the error.
 */
export class ConsumerFailedError extends PreforkError {
  static override readonly code: string = 'PREFORK_CONSUMER_FAILED';
  /** What the fetch loop threw (also its `cause`). */
  constructor(cause: unknown) {
    super(`the consumer stopped fetching: ${messageOf(cause)}`, { cause });
  }
}

/** The pool is closed: apply() or start() after close()/terminate(), or a job dropped by terminate(). */
export class PoolClosedError extends PreforkError {
  static override readonly code: string = 'PREFORK_POOL_CLOSED';
  /** The message says what was refused or cut off. */
  constructor(message = 'the pool is closed') {
    super(message);
  }
}

/**
 * `Worker.start()` did not start the worker: `stop()` was called before it,
 * or while it connected, registered or waited for the children. What it had
 * started is stopped; the worker never ran ('ready' was not emitted).
 */
export class WorkerStoppedError extends PreforkError {
  static override readonly code: string = 'PREFORK_WORKER_STOPPED';
  /** The message says when the stop came. */
  constructor(message = 'the worker was stopped before it started') {
    super(message);
  }
}

/** A job taken back out of the pool before it started (warm shutdown, fenced node). */
export class JobWithdrawnError extends PreforkError {
  static override readonly code: string = 'PREFORK_JOB_WITHDRAWN';
  /** The message says why, when the default does not. */
  constructor(message = 'the job was withdrawn from the pool before it started') {
    super(message);
  }
}

/** A job's result did not arrive within the time the caller was willing to wait. */
export class ResultTimeoutError extends PreforkError {
  static override readonly code: string = 'PREFORK_RESULT_TIMEOUT';
  /** The job whose result did not come. */
  readonly jobId: string;
  /** The job's id, and how long the caller waited, in ms. */
  constructor(jobId: string, timeoutMs: number) {
    super(`no result for job ${jobId} within ${timeoutMs} ms`);
    this.jobId = jobId;
  }
}

/**
 * A job's result was announced as ready but is no longer stored when read:
 * it expired (the result TTL) or Redis evicted it (maxmemory). Also a job of
 * the client's that is nowhere (`nowhere`): in no queue, held by no node,
 * with no result stored; it was purged, or its result expired (with the
 * reply list that announced it), or Redis lost it.
 */
export class ResultGoneError extends PreforkError {
  static override readonly code: string = 'PREFORK_RESULT_GONE';
  /** The job whose result is gone. */
  readonly jobId: string;
  /** The job's id; `nowhere` when the job was found in no queue either. */
  constructor(jobId: string, nowhere = false) {
    super(
      nowhere
        ? `job ${jobId} is in no queue, held by no node and has no stored result: it was purged, or its result expired after the result TTL, or Redis lost it`
        : `the result of job ${jobId} was ready but is no longer stored (it expired after the result TTL, or Redis evicted it)`,
    );
    this.jobId = jobId;
  }
}

/**
 * The job has no result to wait for: it was enqueued with ignoreResult, or
 * it ended but its task is defined with ignoreResult (then `task` and
 * `state` say which, and how it ended).
 */
export class NoResultError extends PreforkError {
  static override readonly code: string = 'PREFORK_NO_RESULT';
  /** The job without a result. */
  readonly jobId: string;
  /** The task defined with ignoreResult (absent when the job itself was enqueued with it). */
  readonly task?: string;
  /** How the job ended (SUCCESS or FAILURE), when its task ignores results. */
  readonly state?: string;
  /** The job's id; the task and the final state when the task's own ignoreResult dropped the result. */
  constructor(jobId: string, ignoredBy?: { task: string; state: string }) {
    super(
      ignoredBy === undefined
        ? `job ${jobId} was enqueued with ignoreResult: it has no result to wait for`
        : `job ${jobId} ended in ${ignoredBy.state}, but task "${ignoredBy.task}" is defined with ignoreResult: ` +
            'its value and error were not kept (enqueue with ignoreResult: false to keep them)',
    );
    this.jobId = jobId;
    if (ignoredBy !== undefined) {
      this.task = ignoredBy.task;
      this.state = ignoredBy.state;
    }
  }
}

/**
 * The job was revoked (`client.revoke`, `prefork revoke`): it never ran, or,
 * revoked with `terminate`, it was stopped while running.
 */
export class RevokedError extends PreforkError {
  static override readonly code: string = 'PREFORK_REVOKED';
  /** The revoked job, when known. */
  readonly jobId: string | undefined;
  /** The job's id; `terminated` when it was stopped while running. */
  constructor(jobId?: string, terminated = false) {
    super(revokedMessage(jobId, terminated));
    this.jobId = jobId;
  }
}

/** RevokedError's message, for a revoke that writes the error's wire form without making one (revoke-record.ts). */
export function revokedMessage(jobId?: string, terminated = false): string {
  if (jobId === undefined) return 'the job was revoked';
  return terminated ? `job ${jobId} was revoked and terminated while running` : `job ${jobId} was revoked`;
}

/** The job failed and its result records no error (written by something else). */
export class JobFailedError extends PreforkError {
  static override readonly code: string = 'PREFORK_JOB_FAILED';
  /** The job that failed. */
  readonly jobId: string;
  /** The job's id. */
  constructor(jobId: string) {
    super(`job ${jobId} failed`);
    this.jobId = jobId;
  }
}

/** The Client was closed: by enqueue() after close(), or a result() still waiting when it closed. */
export class ClientClosedError extends PreforkError {
  static override readonly code: string = 'PREFORK_CLIENT_CLOSED';
  /** The message says what was refused or cut off. */
  constructor(message = 'the client is closed') {
    super(message);
  }
}

/** A broker call after close(), or one that close() cut short (a connect in progress). */
export class BrokerClosedError extends PreforkError {
  static override readonly code: string = 'PREFORK_BROKER_CLOSED';
  /** No arguments: the message is fixed. */
  constructor() {
    super('the broker is closed');
  }
}

/** The broker cannot be reached (connection refused, timed out, bad credentials); the Worker retries. */
export class BrokerUnavailableError extends PreforkError {
  static override readonly code: string = 'PREFORK_BROKER_UNAVAILABLE';
  /** The broker URL, its password masked. */
  readonly url: string;
  /** The URL (password masked), what went wrong, and the connection's error as `cause`. */
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(`cannot connect to the broker at ${url}: ${detail}`, options);
    this.url = url;
  }
}

/**
 * The connection to the broker was lost and did not come back within the
 * attempts a call waits for (two reconnects, about 0.3 s): the call was
 * never sent, so nothing of it was applied, and sending it again is safe.
 * A BrokerUnavailableError; a call that was sent before the connection
 * dropped fails with BrokerUnavailableError saying it may have been applied.
 */
export class BrokerOfflineError extends BrokerUnavailableError {
  static override readonly code: string = 'PREFORK_BROKER_OFFLINE';
  /** The URL (password masked), why the connection is down, and the error that ended the wait as `cause`. */
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super(url, `${detail}; the call was not sent, so nothing of it was applied`, options);
  }
}

/** What a call that got no answer says of what it sent: Redis may have run it before the answer was lost or late. */
export const MAY_HAVE_BEEN_APPLIED = 'what was sent may or may not have been applied';

/**
 * The broker is connected but did not answer a call within its bound (the
 * Client's `commandTimeout`, or a one-shot CLI command's): Redis sent
 * nothing for that long (stopped, overloaded, or out of reach). What was
 * sent may or may not have been applied: Redis runs what it received if it
 * resumes, so give jobs an `id` to enqueue them again safely.
 */
export class BrokerTimeoutError extends BrokerUnavailableError {
  static override readonly code: string = 'PREFORK_BROKER_TIMEOUT';
  /** The bound that ran out, in ms. */
  readonly timeoutMs: number;
  /** The URL (password masked), what was not answered (a command, a script), and the bound in ms. */
  constructor(url: string, what: string, timeoutMs: number) {
    super(url, `no answer to ${what} within ${timeoutMs} ms`);
    // Connected, yet silent: not BrokerUnavailableError's "cannot connect".
    this.message = `the broker at ${url} did not answer ${what} within ${timeoutMs} ms (commandTimeout; a Redis that is stopped, overloaded or out of reach): ${MAY_HAVE_BEEN_APPLIED}`;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The broker understood a request and refused it (Redis: an error reply such
 * as WRONGTYPE), or the request cannot even be encoded: sent again, it would
 * fail the same way, so it is not retried. Also a connection refused (a wrong
 * password, a database Redis does not have, a server that is not Redis).
 * `cause` is the broker's own error.
 */
export class BrokerRefusedError extends PreforkError {
  static override readonly code: string = 'PREFORK_BROKER_REFUSED';
}

/**
 * Redis is full (it reached maxmemory and, under the noeviction policy
 * prefork needs, refuses writes): it refused to enqueue, so nothing of the
 * call was written; or to record a revoke, whose jobs that waited in their
 * queues are revoked all the same, while jobs held by a node or not started
 * yet may still run. Not a refusal for good: the same call succeeds once
 * Redis has room. `cause` is Redis's OOM reply.
 */
export class BrokerFullError extends PreforkError {
  static override readonly code: string = 'PREFORK_BROKER_FULL';
  /** The broker's URL, password masked. */
  readonly url: string;
  constructor(url: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.url = url;
  }
}

/**
 * Part of an enqueue of many jobs failed after other parts landed. Redis
 * refused some (it filled up half way, a value over its proto-max-bulk-len,
 * a key of the wrong type), or left some unanswered (BrokerTimeoutError, or
 * a connection that closed before the answer: BrokerUnavailableError):
 * those in `enqueued` are in their queues and will run, those in
 * `notEnqueued` are not (enqueue only those again), and those in
 * `unconfirmed` got no answer: they may or may not be queued (with an own
 * `id` each, enqueueing them again adds none twice). `cause` is Redis's
 * refusal, or the error of the first unanswered part.
 */
export class EnqueueIncompleteError extends PreforkError {
  static override readonly code: string = 'PREFORK_ENQUEUE_INCOMPLETE';
  /** Ids of the jobs (and workflows) that were enqueued. */
  readonly enqueued: string[];
  /** Ids of those that were not. */
  readonly notEnqueued: string[];
  /** Ids of those Redis did not answer for (timed out, or the connection closed first): they may or may not be enqueued. */
  readonly unconfirmed: string[];
  /**
   * What became of each item given to `enqueueMany`, in their order, for
   * items given without an `id` (theirs are made at enqueue, so the id
   * lists cannot name them): `items.filter((_, i) => err.byItem[i] ===
   * 'notEnqueued')` are the ones to enqueue again. Undefined when a broker
   * is called directly.
   */
  readonly byItem: EnqueueItemOutcome[] | undefined;
  /** What landed, what did not, what is not known, and Redis's refusal (or the first unanswered part's error) as `cause`; `byItem` per item. */
  constructor(
    enqueued: string[],
    notEnqueued: string[],
    cause: unknown,
    unconfirmed: string[] = [],
    byItem?: EnqueueItemOutcome[],
  ) {
    const total = enqueued.length + notEnqueued.length + unconfirmed.length;
    const rest =
      unconfirmed.length === 0
        ? 'then the broker refused the rest (their ids: err.notEnqueued)'
        : `then the broker did not answer for ${unconfirmed.length}: they may or may not be enqueued (their ids: err.unconfirmed)` +
          (notEnqueued.length === 0 ? '' : `, and refused ${notEnqueued.length} (their ids: err.notEnqueued)`);
    super(`${enqueued.length} of ${total} jobs were enqueued, ${rest}: ${messageOf(cause)}`, { cause });
    this.enqueued = enqueued;
    this.notEnqueued = notEnqueued;
    this.unconfirmed = unconfirmed;
    this.byItem = byItem;
  }

  /** The same error with what became of each of the items whose jobs (or workflows) have the ids `ids`, in order. */
  withItems(ids: readonly string[]): EnqueueIncompleteError {
    const landed = new Set(this.enqueued);
    const unknown = new Set(this.unconfirmed);
    const byItem = ids.map((id): EnqueueItemOutcome =>
      landed.has(id) ? 'enqueued' : unknown.has(id) ? 'unconfirmed' : 'notEnqueued',
    );
    return new EnqueueIncompleteError(this.enqueued, this.notEnqueued, this.cause, this.unconfirmed, byItem);
  }
}

/** What became of one item of a partly failed `enqueueMany` (EnqueueIncompleteError.byItem). */
export type EnqueueItemOutcome = 'enqueued' | 'notEnqueued' | 'unconfirmed';

/** A node's metrics or health endpoint cannot listen (the port is in use, the host is not an address of this machine). */
export class EndpointError extends PreforkError {
  static override readonly code: string = 'PREFORK_ENDPOINT';
  /** The host and port that could not be bound, as `host:port` (an IPv6 address in brackets: `[::1]:9464`). */
  readonly address: string;
  /** The host, the port, the paths it was to serve, and the listen error as `cause`. */
  constructor(host: string, port: number, paths: readonly string[], cause: NodeJS.ErrnoException) {
    const why = cause.code === 'EADDRINUSE' ? 'the port is in use' : cause.message;
    // An IPv6 address in brackets, as in a URL: `::1:9464` reads as the address ::1:9464, with no port.
    const address = host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
    super(`cannot serve ${paths.join(', ')} on ${address}: ${why}`, { cause });
    this.address = address;
  }
}

/**
 * Thrown by a task to ask for a retry; the Worker schedules it (`delay` in
 * ms). The retry waits in the broker's delayed set and, once due, joins the
 * tail of its queue behind the jobs already waiting there.
 */
export class Retry extends PreforkError {
  static override readonly code: string = 'PREFORK_RETRY';
  /** How long to wait before the next attempt, in ms (undefined: the job's backoff). */
  readonly delay: number | undefined;
  /**
   * `delay`: ms before the next attempt (default: the job's backoff);
   * `message`: the attempt's error message (default "retry requested").
   * Retries spent are counted as for any failure; a job with no `retries`
   * configured gets 3 (Celery's max_retries default).
   */
  constructor(options: { delay?: number; message?: string } = {}) {
    super(options.message ?? 'retry requested');
    this.delay = options.delay;
  }
}

/**
 * A job that threw Retry with its retries spent (Celery's
 * MaxRetriesExceededError): its FAILURE, in place of the Retry itself, so
 * that a task which awaits such a job and lets its error through fails
 * rather than asking to be retried in turn. The message names the retries
 * and the last Retry's message; `cause` is that Retry.
 */
export class MaxRetriesExceededError extends PreforkError {
  static override readonly code: string = 'PREFORK_MAX_RETRIES_EXCEEDED';
}

/** One member of a workflow's failed group, as WorkflowError carries it. */
export interface WorkflowMemberState {
  /** What the member is: a task, or a nested chain, group or chord. */
  kind: 'task' | 'chain' | 'group' | 'chord';
  /** Its state: a job's (SUCCESS, FAILURE, STARTED, ...), WAITING (not started), SKIPPED (never will). */
  state: string;
  /** task: its job's id. */
  id?: string;
  /** task: its task's name. */
  task?: string;
  /** What it returned (SUCCESS). */
  value?: unknown;
  /** What it threw (FAILURE). */
  error?: { name: string; message: string; code?: string };
}

/**
 * A workflow failed in a group (a group's member, or a chord's): carries the
 * member that failed first and every member of that group, with its state and
 * value or error, so partial success is visible.
 */
export class WorkflowError extends PreforkError {
  static override readonly code: string = 'PREFORK_WORKFLOW_FAILED';
  /** The workflow's id. */
  readonly workflowId: string;
  /** The member (a job) whose failure failed the workflow. */
  readonly member: { id: string; task: string; error: { name: string; message: string; code?: string } };
  /** Every member of the group it failed in, in member order. */
  readonly members: WorkflowMemberState[];
  /** The workflow, the failed member and the group's members. */
  constructor(workflowId: string, member: WorkflowError['member'], members: WorkflowMemberState[]) {
    super(
      `workflow ${workflowId} failed: member ${member.task} (job ${member.id}) failed: ${member.error.name}: ${member.error.message}`,
    );
    this.workflowId = workflowId;
    this.member = member;
    this.members = members;
  }
}

/**
 * A task's own error, rebuilt in the parent (and on a Client) from what the
 * child sent: `name`, `message`, `stack` and own enumerable properties
 * survive the trip. Not a PreforkError: the error is the task's.
 */
export class RemoteTaskError extends Error {
  /** The task error's own enumerable properties (e.g. `code`), as the child sent them. */
  [key: string]: unknown;
}

/**
 * An error's message, anything else as a string. Never throws, whatever it
 * is given (a task may throw a Proxy whose traps throw, or an object whose
 * toString throws): what cannot be read is said so, with why.
 */
export function messageOf(err: unknown): string {
  try {
    if (!(err instanceof Error)) return String(err);
    const message: unknown = err.message;
    return typeof message === 'string' ? message : String(message);
  } catch (readErr) {
    return `(${typeof err} that cannot be read: ${whyUnreadable(readErr)})`;
  }
}

/** What a failed read threw, as text; one level only, so an error that throws again cannot recurse. */
export function whyUnreadable(readErr: unknown): string {
  try {
    const message: unknown = readErr instanceof Error ? readErr.message : readErr;
    return String(message);
  } catch {
    return 'something that cannot be read either';
  }
}

/** A value as an error message shows it: strings quoted, objects as JSON, else their type. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean' || value == null)
    return String(value);
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}
