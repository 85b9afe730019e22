import type { WorkerProcess } from './worker-process.js';

/**
 * How late the parent may learn that a job with an onStart callback started
 * when nothing else tells it (its child recorded the start without waking the
 * parent). A job shorter than this costs no wake-up for its start: its RESULT
 * says it.
 */
export const START_NOTICE_MS = 10;

/**
 * Looks, every START_NOTICE_MS while there is anything to look for, at the
 * children whose running job's start nobody has heard of yet and that
 * someone waits for (onStart). One timer for the whole pool.
 */
export class StartWatch {
  private readonly procs = new Set<WorkerProcess>();
  private timer: NodeJS.Timeout | undefined;

  /** `look` reads the child's start record and announces what started; true while its head's start is still unknown. */
  constructor(private readonly look: (proc: WorkerProcess) => boolean) {}

  add(proc: WorkerProcess): void {
    this.procs.add(proc);
    this.timer ??= this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.procs.clear();
  }

  private arm(): NodeJS.Timeout {
    const timer = setTimeout(() => this.sweep(), START_NOTICE_MS);
    // The children's pipes hold the process while a job runs.
    timer.unref();
    return timer;
  }

  private sweep(): void {
    this.timer = undefined;
    for (const proc of this.procs) if (!this.look(proc)) this.procs.delete(proc);
    if (this.procs.size > 0) this.timer = this.arm();
  }
}
