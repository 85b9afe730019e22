import type { Delivery, Settlement } from '../broker/types.js';
import type { ConsumerObserver } from '../consumer/consumer.js';
import { outcomeOf, wholeErrorAt } from '../consumer/outcome.js';
import { inResult } from '../util/cut-text.js';
import type { JobRun } from '../consumer/job-log.js';
import { WorkerLostError } from '../errors.js';
import type { EventBuffer } from './event-buffer.js';
import type { NodeEvent } from './node-event.js';

/**
 * A job's life on this node as events: received, started, then its outcome
 * (succeeded, retried with the next attempt's time, failed, given back),
 * preceded by job-lost when its child died under it; or, before it starts,
 * deferred by a rate limit with the time it is due again.
 */
export class JobEvents implements ConsumerObserver {
  constructor(
    private readonly node: string,
    private readonly buffer: EventBuffer,
  ) {}

  // received, started and succeeded are most of the stream: held as tuples (event-batch.ts).
  received(d: Delivery): void {
    const { job } = d;
    this.buffer.push([0, Date.now(), job.id, job.task, d.queue, job.attempt, undefined, undefined]);
  }

  started(d: Delivery, pid: number, startedAt: number): void {
    const { job } = d;
    this.buffer.push([1, startedAt, job.id, job.task, d.queue, undefined, pid, undefined]);
  }

  progress(d: Delivery, value: unknown, at: number, kept: boolean): void {
    const { job } = d;
    this.buffer.push(
      {
        type: 'job-progress',
        at,
        node: this.node,
        jobId: job.id,
        task: job.task,
        queue: d.queue,
        progress: value,
      },
      kept ? inResult(job.id) : undefined,
    );
  }

  settled(s: Settlement, run: JobRun | undefined, outcome: unknown): void {
    const { job } = s.delivery;
    const at = run?.finishedAt ?? Date.now();
    const kind = outcomeOf(s, outcome);
    if (kind === 'succeeded') {
      const runtimeMs = run?.startedAt === undefined ? undefined : Math.max(0, run.finishedAt - run.startedAt);
      this.buffer.push([2, at, job.id, job.task, s.delivery.queue, job.attempt, run?.pid, runtimeMs]);
      return;
    }
    const base = { at, node: this.node, jobId: job.id, task: job.task, queue: s.delivery.queue, attempt: job.attempt };
    if (s.kind === 'defer') {
      // Sent back to wait for its turn: no outcome, no retry spent (outcomeOf leaves it out of the metrics).
      this.buffer.push({ ...base, type: 'job-deferred', dueAt: at + Math.max(0, Math.ceil(s.delay)) });
      return;
    }
    const timing: Partial<NodeEvent> = {};
    if (run?.pid !== undefined) timing.pid = run.pid;
    if (run?.startedAt !== undefined) timing.runtimeMs = Math.max(0, run.finishedAt - run.startedAt);
    const whole = wholeErrorAt(s);
    if (outcome instanceof WorkerLostError)
      this.buffer.push({ ...base, ...timing, type: 'job-lost', exitCode: outcome.exitCode, signal: outcome.signal });
    switch (kind) {
      case 'revoked':
        this.buffer.push({ ...base, ...timing, type: 'job-revoked' });
        return;
      case 'retried':
        this.buffer.push(
          {
            ...base,
            ...timing,
            type: 'job-retried',
            retryAt: at + (s.kind === 'retry' ? s.delay : 0),
            error: errorOf(outcome, undefined),
          },
          whole,
        );
        return;
      case 'failed':
        this.buffer.push(
          {
            ...base,
            ...timing,
            type: 'job-failed',
            error: errorOf(outcome, s.kind === 'dead' ? s.reason : undefined),
          },
          whole,
        );
        return;
      case 'given_back':
        this.buffer.push({ ...base, type: 'job-given-back' });
        return;
      default:
        return;
    }
  }
}

/** The error's name and message; a failure that is no Error (an unknown task, a malformed job) by its reason. */
function errorOf(outcome: unknown, reason: string | undefined): { name: string; message: string } {
  if (outcome instanceof Error) return { name: outcome.name, message: outcome.message };
  return { name: 'Error', message: reason ?? String(outcome) };
}
