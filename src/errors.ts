/**
 * Every error prefork raises has a class here and a stable `code`, so callers
 * can branch on `err.code` and logs can be grepped (Node's ERR_* convention).
 */
export class PreforkError extends Error {
  /** Stable and machine-readable, e.g. `PREFORK_BAD_OPTION`: branch on it rather than on the message. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A constructor option or CLI value that is missing, of the wrong type or out of range. */
export class OptionError extends PreforkError {
  readonly option: string;
  readonly value: unknown;
  constructor(option: string, value: unknown, expected: string) {
    super('PREFORK_BAD_OPTION', `invalid option ${option}: ${describeValue(value)} (expected ${expected})`);
    this.option = option;
    this.value = value;
  }
}

/** The child running the job exited or was killed before it sent a result. */
export class WorkerLostError extends PreforkError {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly pid: number | undefined;
  constructor(pid: number | undefined, exitCode: number | null, signal: NodeJS.Signals | null, reason?: string) {
    const how = signal ? `signal ${signal}` : `exit code ${String(exitCode)}`;
    super(
      'PREFORK_WORKER_LOST',
      `worker process ${pid ?? '?'} exited with ${how} while running the job${reason ? ` (${reason})` : ''}`,
    );
    this.exitCode = exitCode;
    this.signal = signal;
    this.pid = pid;
  }
}

/** Hard time limit: the child was SIGKILLed and replaced. */
export class TimeLimitExceeded extends PreforkError {
  readonly limitMs: number;
  constructor(limitMs: number, task: string) {
    super(
      'PREFORK_TIME_LIMIT',
      `task ${task} exceeded its hard time limit of ${limitMs} ms; its worker process was killed`,
    );
    this.limitMs = limitMs;
  }
}

/** Soft time limit: raised inside the child through the job's AbortSignal. */
export class SoftTimeLimitExceeded extends PreforkError {
  constructor(message = 'soft time limit exceeded') {
    super('PREFORK_SOFT_TIME_LIMIT', message);
  }
}

/** The task name is not registered by the app's task module. */
export class UnknownTaskError extends PreforkError {
  readonly task: string;
  constructor(task: string, known?: readonly string[]) {
    const hint = known && known.length > 0 ? `; registered tasks: ${known.join(', ')}` : '';
    super('PREFORK_UNKNOWN_TASK', `unknown task ${JSON.stringify(task)}${hint}`);
    this.task = task;
  }
}

/** A task returned a value msgpack cannot carry (functions, cycles, symbols...). */
export class ResultSerializationError extends PreforkError {
  readonly task: string;
  constructor(task: string, cause: unknown) {
    super('PREFORK_RESULT_NOT_SERIALIZABLE', `the result of task ${task} cannot be serialized: ${messageOf(cause)}`);
    this.task = task;
  }
}

/** A job's payload bytes are not a msgpack argument array; retrying cannot help. */
export class PayloadDecodeError extends PreforkError {
  readonly task: string;
  constructor(task: string, detail: string) {
    super('PREFORK_BAD_PAYLOAD', `the payload of task ${task} cannot be decoded: ${detail}`);
    this.task = task;
  }
}

/** Job arguments the parent cannot encode for the pipe. */
export class ArgumentSerializationError extends PreforkError {
  constructor(task: string, cause: unknown) {
    super('PREFORK_ARGS_NOT_SERIALIZABLE', `the arguments of task ${task} cannot be serialized: ${messageOf(cause)}`, {
      cause,
    });
  }
}

/** Job arguments too large for a child to receive (its `maxFrameSize`): refused at enqueue. */
export class ArgumentsTooLargeError extends PreforkError {
  /** The task the job was for. */
  readonly task: string;
  /** Bytes the job's frame to a child would take. */
  readonly bytes: number;
  /** The largest frame a child receives. */
  readonly limit: number;
  constructor(task: string, bytes: number, limit: number) {
    super(
      'PREFORK_ARGS_TOO_LARGE',
      `the arguments of task ${task} make a job of ${bytes} bytes, over the ${limit} bytes a child can receive (maxFrameSize)`,
    );
    this.task = task;
    this.bytes = bytes;
    this.limit = limit;
  }
}

/** A child sent bytes that break the pipe protocol; the child is replaced. */
export class ProtocolError extends PreforkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('PREFORK_PROTOCOL', message, options);
  }
}

/** The task module could not be loaded in a child. */
export class AppLoadError extends PreforkError {
  constructor(app: string, detail: string) {
    super('PREFORK_APP_LOAD', `cannot load task module ${app}: ${detail}`);
  }
}

/** The pool gave up: children keep dying before they can work (fork loop guard). */
export class PoolFailedError extends PreforkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('PREFORK_POOL_FAILED', message, options);
  }
}

/**
 * The Consumer's fetch loop failed on something other than the broker being
 * unreachable (a bug, a broker reply it cannot handle): nothing would fetch
 * any more, so the node stops and gives its jobs back. `cause` is the error.
 */
export class ConsumerFailedError extends PreforkError {
  constructor(cause: unknown) {
    super('PREFORK_CONSUMER_FAILED', `the consumer stopped fetching: ${messageOf(cause)}`, { cause });
  }
}

/** apply() after close()/terminate(), or a job dropped by terminate(). */
export class PoolClosedError extends PreforkError {
  constructor(message = 'the pool is closed') {
    super('PREFORK_POOL_CLOSED', message);
  }
}

/** A job's result did not arrive within the time the caller was willing to wait. */
export class ResultTimeoutError extends PreforkError {
  readonly jobId: string;
  constructor(jobId: string, timeoutMs: number) {
    super('PREFORK_RESULT_TIMEOUT', `no result for job ${jobId} within ${timeoutMs} ms`);
    this.jobId = jobId;
  }
}

/**
 * A job's result was announced as ready but is no longer stored when read:
 * it expired (the result TTL) or Redis evicted it (maxmemory).
 */
export class ResultGoneError extends PreforkError {
  /** The job whose result is gone. */
  readonly jobId: string;
  constructor(jobId: string) {
    super(
      'PREFORK_RESULT_GONE',
      `the result of job ${jobId} was ready but is no longer stored (it expired after the result TTL, or Redis evicted it)`,
    );
    this.jobId = jobId;
  }
}

/** A job taken back out of the pool's outbound buffer before any child got it (warm shutdown, fenced node). */
export class JobWithdrawnError extends PreforkError {
  constructor() {
    super('PREFORK_JOB_WITHDRAWN', 'the job was withdrawn from the pool before it started');
  }
}

/**
 * A task's own error, rebuilt in the parent from what the child sent: `name`,
 * `message`, `stack` and own enumerable properties survive the trip.
 */
export class RemoteTaskError extends Error {
  [key: string]: unknown;
}

/** Thrown by a task to ask for a retry; the Worker schedules it (`delay` in ms). */
export class Retry extends Error {
  readonly delay: number | undefined;
  constructor(options: { delay?: number; message?: string } = {}) {
    super(options.message ?? 'retry requested');
    this.name = 'Retry';
    this.delay = options.delay;
  }
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
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

/**
 * The broker understood a request and refused it (Redis: an error reply such
 * as WRONGTYPE), or the request cannot even be encoded: sent again, it would
 * fail the same way, so it is not retried. `cause` is the broker's own error.
 */
export class BrokerRefusedError extends PreforkError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('PREFORK_BROKER_REFUSED', message, options);
  }
}

/** A broker call after close(), or one that close() cut short (a connect in progress). */
export class BrokerClosedError extends PreforkError {
  constructor() {
    super('PREFORK_BROKER_CLOSED', 'the broker is closed');
  }
}

/** The broker cannot be reached (connection refused, timed out, bad credentials); the Worker retries. */
export class BrokerUnavailableError extends PreforkError {
  /** The broker's URL, with any password masked. */
  readonly url: string;
  constructor(url: string, detail: string, options?: { cause?: unknown }) {
    super('PREFORK_BROKER_UNAVAILABLE', `cannot connect to the broker at ${url}: ${detail}`, options);
    this.url = url;
  }
}
