import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Delivery, Settlement } from '../broker/types.js';
import { Retry } from '../errors.js';
import { packedSize } from '../broker/event-codec.js';
import { cutText, inResult, whereWhole } from '../util/cut-text.js';
import { wholeErrorAt } from './outcome.js';

/** The level of the per-job lines (received, succeeded, retry by Retry): `debug` keeps a busy node's info log quiet. */
export type JobLogLevel = 'info' | 'debug';
export const JOB_LOG_LEVELS: readonly JobLogLevel[] = ['info', 'debug'];

/** What the Consumer knows of an attempt when it logs the outcome. */
export interface JobRun {
  pid: number | undefined;
  startedAt: number | undefined;
  finishedAt: number;
}

/**
 * The per-job lines a person follows (Celery's "Task add[id] received" and
 * "succeeded in 0.01s"): one when a job arrives, one for its outcome, with
 * the task, the job id and the child pid. Failures log whatever the job
 * level (warn when a retry follows, error when final), with the task's own
 * stack frames only.
 */
export class JobLog {
  constructor(
    private readonly log: Logger,
    private readonly level: JobLogLevel,
  ) {}

  received(d: Delivery): void {
    if (!this.log.isLevelEnabled(this.level)) return;
    const { job } = d;
    this.log[this.level](
      { task: job.task, jobId: job.id, queue: d.queue, attempt: job.attempt },
      `${job.task}[${job.id}] received`,
    );
  }

  settled(s: Settlement, outcome: unknown, run: JobRun): void {
    // The hot path: a success, and a job level the logger drops (nothing to build).
    if (s.kind === 'ack' && !this.log.isLevelEnabled(this.level)) return;
    const { job } = s.delivery;
    const took = run.startedAt === undefined ? undefined : run.finishedAt - run.startedAt;
    const fields = { task: job.task, jobId: job.id, queue: s.delivery.queue, childPid: run.pid, runtimeMs: took };
    const where = `${took === undefined ? '' : ` in ${took} ms`}${run.pid === undefined ? '' : ` (pid ${run.pid})`}`;
    const name = `${job.task}[${job.id}]`;
    switch (s.kind) {
      case 'ack':
        if (this.log.isLevelEnabled(this.level)) this.log[this.level](fields, `${name} succeeded${where}`);
        return;
      case 'retry': {
        const whole = wholeErrorAt(s);
        const next = `retry in ${s.delay} ms (attempt ${job.attempt + 2})`;
        // Asked for by the task: an expected turn, so no stack; an error that will be retried keeps its stack.
        if (outcome instanceof Retry) {
          if (this.log.isLevelEnabled(this.level))
            this.log[this.level](
              { ...fields, retryInMs: s.delay },
              `${name} ${next}: ${cutText(outcome.message, 'message', whole)}`,
            );
        } else {
          this.log.warn(
            { ...fields, retryInMs: s.delay, err: shownError(outcome, whole, fieldsKept(s)) },
            `${name} failed${where}; ${next}: ${describe(outcome, whole)}`,
          );
        }
        return;
      }
      case 'dead': {
        const whole = wholeErrorAt(s);
        const why =
          outcome instanceof Error && s.reason === outcome.message
            ? describe(outcome, whole)
            : cutText(s.reason, 'reason', whole);
        this.log.error({ ...fields, err: shownError(outcome, whole, fieldsKept(s)) }, `${name} failed${where}: ${why}`);
        return;
      }
      case 'giveBack':
        this.log.debug(fields, `${name} given back to its queue (not started)`);
        return;
      case 'defer':
        this.log.debug({ ...fields, startsInMs: Math.ceil(s.delay) }, `${name} waits for its turn (rate limit)`);
        return;
      case 'progress':
        return;
    }
  }
}

/** Where a failed attempt's error fields are kept whole: only a stored result keeps them (the dead set, its message). */
function fieldsKept(s: Settlement & { kind: 'retry' | 'dead' }): string | undefined {
  return s.result?.error === undefined ? undefined : inResult(s.delivery.job.id);
}

/** The error's name and message, each cut past TEXT_KEPT_MAX (a task's message may be megabytes). */
function describe(err: unknown, whole: string | undefined): string {
  return err instanceof Error
    ? `${cutText(err.name, 'name', whole)}: ${cutText(err.message, 'message', whole)}`
    : cutText(String(err), 'reason', whole);
}

/** Most characters of a stack a log line keeps: frames enough to find the task's code. */
const STACK_KEPT_MAX = 16 * 1024;

/** prefork's own code (all of it but the demo's task module): its frames say nothing about the task that failed. */
const ROOT = new URL('../', import.meta.url);
const OWN = [ROOT.href, fileURLToPath(ROOT)];
const DEMO = [new URL('demo/', ROOT).href, fileURLToPath(new URL('demo/', ROOT))];

/**
 * A task's stack without prefork's frames (the child's job runner, the pipe
 * decoder) nor Node's internals: what is left is the task's own code. A stack
 * with nothing left (a time limit, a lost child) is dropped.
 */
export function taskStack(stack: string | undefined): string | undefined {
  if (stack === undefined) return undefined;
  const lines = stack.split('\n');
  const first = lines.findIndex((line) => /^\s+at /.test(line));
  if (first < 0) return stack;
  const frames = lines.slice(first).filter((line) => !isOwnFrame(line));
  return frames.length === 0 ? undefined : [...lines.slice(0, first), ...frames].join('\n');
}

function isOwnFrame(line: string): boolean {
  if (/\(node:|at node:|\bAsyncLocalStorage\.run\b/.test(line)) return true;
  return OWN.some((root) => line.includes(root)) && !DEMO.some((demo) => line.includes(demo));
}

/**
 * The error as the log shows it: a copy with the task's stack only (the
 * error the pool settled with is left as it is). pino types an error by its
 * constructor, which for a task's error rebuilt in the parent is
 * RemoteTaskError: the copy has none, so the log says the task's own name.
 * Its name, message and stack are cut as the line's text is; `fieldsWhole`
 * says where its other fields, and its causes, are kept whole. Its cause is
 * shown the same way (pino logs the chain), MAX_CAUSES_SHOWN deep.
 */
function shownError(err: unknown, whole: string | undefined, fieldsWhole: string | undefined, depth = 0): unknown {
  if (!(err instanceof Error)) return err;
  const shown = Object.create(Object.getPrototypeOf(err) as object, Object.getOwnPropertyDescriptors(err)) as Error;
  Object.defineProperty(shown, 'constructor', { value: undefined, enumerable: false });
  Object.defineProperty(shown, 'stack', { value: boundedStack(err, whole), enumerable: false, writable: true });
  const message = cutText(err.message, 'message', whole);
  if (message !== err.message) Object.defineProperty(shown, 'message', { value: message, enumerable: false });
  const name = cutText(err.name, 'name', whole);
  if (name !== err.name) Object.defineProperty(shown, 'name', { value: name, enumerable: false });
  const cause = Object.getOwnPropertyDescriptor(err, 'cause');
  if (cause !== undefined && 'value' in cause) {
    if (depth < MAX_CAUSES_SHOWN)
      Object.defineProperty(shown, 'cause', {
        ...cause,
        value: shownError(cause.value, fieldsWhole, fieldsWhole, depth + 1),
      });
    // Enumerable: pino writes an error-like cause whatever, any other only when it is.
    else
      Object.defineProperty(shown, 'cause', {
        ...cause,
        value: `[cause cut: deeper than ${MAX_CAUSES_SHOWN} causes${whereWhole(fieldsWhole)}]`,
        enumerable: true,
      });
  }
  boundFields(shown, fieldsWhole);
  return shown;
}

/** Most causes of an error (a cause's cause, ...) a log line shows; the wire keeps 8 (error-codec.ts). */
const MAX_CAUSES_SHOWN = 8;

/** Most bytes (msgpack) of an error's own fields (a `data`, a `response`) a log line keeps, together. */
const FIELDS_KEPT_MAX = 16 * 1024;

/**
 * Replaces each own enumerable field of the error that would take its
 * fields past FIELDS_KEPT_MAX with a marker naming its size: a task that
 * fails with megabytes of `data` on every attempt logs them once per line
 * otherwise (pino writes every such field).
 */
function boundFields(shown: Error, whole: string | undefined): void {
  let left = FIELDS_KEPT_MAX;
  for (const key of Object.keys(shown)) {
    if (key === 'name' || key === 'message' || key === 'stack') continue;
    const own = Object.getOwnPropertyDescriptor(shown, key);
    // A cause that is an error was shown as one (shownError); any other is a field like the rest.
    if (own === undefined || !('value' in own) || (key === 'cause' && own.value instanceof Error)) continue;
    const size = sizeOf(own.value);
    if (size <= left) {
      left -= size;
      continue;
    }
    const told = Number.isFinite(size) ? `${size} bytes` : 'not measurable';
    Object.defineProperty(shown, key, {
      value: `[field cut: ${told}${whereWhole(whole)}]`,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
}

/** A value's size as msgpack, or Infinity when it does not pack (cycles, functions). */
function sizeOf(value: unknown): number {
  try {
    return packedSize(value);
  } catch {
    return Infinity;
  }
}

/** The task's stack, its first line (which repeats the message) cut as the message is, and the whole bounded. */
function boundedStack(err: Error, whole: string | undefined): string | undefined {
  const stack = taskStack(err.stack);
  if (stack === undefined) return undefined;
  const head = `${err.name}: ${err.message}`;
  const short = stack.startsWith(head) ? `${describe(err, whole)}${stack.slice(head.length)}` : stack;
  return cutText(short, 'stack', whole, STACK_KEPT_MAX);
}
