import type { Logger } from 'pino';
import type { WorkerProcess } from './worker-process.js';

/** What a rolling reload needs of the pool (its Supervisor). */
export interface ReloadHooks {
  /** The children that count toward the pool's size now (not retiring, not gone). */
  active(): readonly WorkerProcess[];
  /** The number of children the pool keeps. */
  target(): number;
  /** Finish what it holds, then exit; a replacement starts now (recycling's path). */
  retire(proc: WorkerProcess): void;
  /** Whether the pool still runs (not closing, not failed). */
  running(): boolean;
}

/**
 * SIGHUP's rolling reload: each child there at the start is retired in turn
 * (it finishes its jobs, as when recycled by maxTasksPerChild, and its
 * replacement loads the task module afresh), the next one only once the
 * pool is back to full strength with every child up, so the node never runs
 * short by more than one child and a module that no longer loads stops the
 * reload at its first replacement. A call during a reload makes it go round
 * once more when done (the module may have changed again).
 */
export class RollingReload {
  private running: Promise<number> | undefined;
  private again = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly hooks: ReloadHooks,
    private readonly log: Logger,
  ) {}

  /** Resolves how many children were retired for the reload. */
  start(): Promise<number> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = this.roll().finally(() => (this.running = undefined));
    return this.running;
  }

  /** A child came up or went, or the pool stopped: a reload waiting for full strength looks again. */
  changed(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private async roll(): Promise<number> {
    let replaced = 0;
    do {
      this.again = false;
      const old = [...this.hooks.active()];
      this.log.info({ children: old.length }, `reloading: replacing ${old.length} children one by one`);
      for (const proc of old) {
        if (!(await this.fullStrength())) return replaced;
        if (proc.retiring || proc.state === 'exited') continue;
        this.hooks.retire(proc);
        replaced++;
      }
      if (!(await this.fullStrength())) return replaced;
      this.log.info({ replaced }, 'reload done: every child runs the task module as it is now');
    } while (this.again);
    return replaced;
  }

  /** Resolves true once every child the pool keeps is up, false if the pool stops first. */
  private fullStrength(): Promise<boolean> {
    const check = (): boolean | undefined => {
      if (!this.hooks.running()) return false;
      const active = this.hooks.active();
      return active.length >= this.hooks.target() && active.every((p) => p.state !== 'starting') ? true : undefined;
    };
    const now = check();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise((resolve) => {
      const wake = (): void => {
        const done = check();
        if (done === undefined) return;
        this.waiters.delete(wake);
        resolve(done);
      };
      this.waiters.add(wake);
    });
  }
}
