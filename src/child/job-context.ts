import { SoftTimeLimitExceeded } from '../errors.js';
import type { TaskContext } from '../tasks.js';
import type { ParentChannel } from './channel.js';
import { JobProgress } from './job-progress.js';

/**
 * currentTask() for one job. The AbortController is created only when a task
 * reads `signal` or a soft time limit fires, keeping no-op jobs cheap.
 */
export class JobContext implements TaskContext {
  private controller: AbortController | undefined;
  /** Created on the first progress() call. */
  private reporter: JobProgress | undefined;
  softTimedOut = false;
  /** Why the signal aborted (a soft time limit, or the parent's ABORT). */
  private abortReason: Error | undefined;
  /** Epoch ms the job started, sent with its RESULT. */
  startedAt = 0;
  scheduledFor: number | undefined;

  constructor(
    readonly seq: number,
    readonly id: string,
    readonly name: string,
    readonly queue: string | undefined,
    readonly retries: number,
    private readonly channel: ParentChannel,
  ) {}

  progress(value: unknown): void {
    this.reporter ??= new JobProgress(this.seq, this.channel);
    this.reporter.report(value);
  }

  /** The job ended: its last progress report goes ahead of its RESULT; later ones are dropped. */
  end(): void {
    this.reporter?.end();
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.abortReason !== undefined && !this.controller.signal.aborted) this.controller.abort(this.abortReason);
    return this.controller.signal;
  }

  softTimeout(): void {
    this.softTimedOut = true;
    this.abort(this.softReason());
  }

  /** Aborts the signal (once: the first reason stays). */
  abort(reason: Error): void {
    this.abortReason ??= reason;
    this.controller?.abort(this.abortReason);
  }

  private softReason(): SoftTimeLimitExceeded {
    return new SoftTimeLimitExceeded(`task ${this.name} exceeded its soft time limit`);
  }
}
