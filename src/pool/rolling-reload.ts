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
 * replacement loads the task module afresh), the next one only once a child
 * that came after the last retire is up (its replacement, or as good), so
 * the reload never leaves the node short by more than one child and a
 * module that no longer loads stops it at its first replacement. A child
 * that went meanwhile (recycled, shrunk, dead) needs no retire. A call
 * during a reload makes it go round once more when done (the module may
 * have changed again).
 *
 * Why not wait for every child to be up: under recycling (maxTasksPerChild
 * 1 and a steady load) some child is nearly always starting, and a reload
 * that waited for none to be left it unfinished for ever.
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
      // The children there just before the last retire: none yet, so the first waits for any child up.
      let before: ReadonlySet<WorkerProcess> = new Set();
      for (const proc of old) {
        if (gone(proc)) continue;
        if (!(await this.replaced(before))) return replaced;
        // Gone while we waited (recycled, shrunk, dead): its successor loads the module as it is now.
        if (gone(proc)) continue;
        before = new Set(this.hooks.active());
        this.hooks.retire(proc);
        replaced++;
      }
      if (!(await this.replaced(before))) return replaced;
      this.log.info({ replaced }, 'reload done: every child runs the task module as it is now');
    } while (this.again);
    return replaced;
  }

  /**
   * Resolves true once a child not in `before` is up, or every child the
   * pool keeps is (a pool shrunk meanwhile spawns no replacement); false if
   * the pool stops first.
   */
  private replaced(before: ReadonlySet<WorkerProcess>): Promise<boolean> {
    const check = (): boolean | undefined => {
      if (!this.hooks.running()) return false;
      const active = this.hooks.active();
      const up = (p: WorkerProcess): boolean => p.state !== 'starting';
      if (active.some((p) => !before.has(p) && up(p))) return true;
      return active.length >= this.hooks.target() && active.every(up) ? true : undefined;
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

/** Retiring or exited: it takes no more jobs, and its successor loads the task module afresh. */
function gone(proc: WorkerProcess): boolean {
  return proc.retiring || proc.state === 'exited';
}
