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
 * of RSS). Once per quiet spell: armed when the pool runs dry, by one timer
 * that never keeps the process alive; a pool that takes a job before it fires
 * arms it again when it runs dry again.
 */
export class IdleTrim {
  private timer: NodeJS.Timeout | undefined;
  private seen = -1;

  /** `activity` changes whenever the pool takes a job; `busy` says whether any job is unsettled. */
  constructor(
    private readonly activity: () => number,
    private readonly busy: () => boolean,
    private readonly collect: () => boolean = collectYoung,
  ) {}

  /** Called when the pool holds no job: trim if it stays so. A no-op while a check is pending. */
  arm(): void {
    if (this.timer !== undefined) return;
    this.seen = this.activity();
    this.timer = setTimeout(() => this.check(), IDLE_TRIM_MS);
    this.timer.unref();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    this.timer = undefined;
    // Busy: its last job's settlement arms it again.
    if (this.busy()) return;
    // Jobs came and went since: quiet only from now.
    if (this.activity() !== this.seen) return this.arm();
    this.collect();
  }
}
