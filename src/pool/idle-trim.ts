import { collectYoung } from '../util/young-gc.js';

/**
 * How long the pool must have had nothing to do before the parent trims its
 * heap. V8 shrinks the new space only when it has seen little allocation over
 * its last 5 s, so less than that would collect for nothing.
 */
export const IDLE_TRIM_MS = 10_000;

/**
 * Gives back the parent's idle heap: once the pool has taken no job for
 * IDLE_TRIM_MS and holds none, one young-generation collection lets V8 shrink
 * the new space that loading prefork and starting the node grew (about 7 MiB
 * of RSS). Once per quiet spell, by one timer that never keeps the process
 * alive: running dry only notes the time, the timer then waits for what is
 * left of the spell.
 */
export class IdleTrim {
  private timer: NodeJS.Timeout | undefined;
  private seen = -1;
  private quietSince = 0;

  /** `activity` changes whenever the pool takes a job; `busy` says whether any job is unsettled. */
  constructor(
    private readonly activity: () => number,
    private readonly busy: () => boolean,
    private readonly collect: () => boolean = collectYoung,
  ) {}

  /** Called when the pool holds no job: a quiet spell starts now. */
  arm(): void {
    this.seen = this.activity();
    this.quietSince = performance.now();
    if (this.timer === undefined) this.wait(IDLE_TRIM_MS);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private wait(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref();
  }

  private check(): void {
    this.timer = undefined;
    // Busy: its last job's settlement starts the next spell.
    if (this.busy()) return;
    if (this.activity() !== this.seen) return this.arm();
    const left = this.quietSince + IDLE_TRIM_MS - performance.now();
    if (left > 0) return this.wait(left);
    this.collect();
  }
}
