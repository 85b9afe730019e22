import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Prefetch } from './prefetch.js';

/** While a node holds jobs past its prefetch's count cap, how often the guard looks at how long they have waited. */
export const GIVE_BACK_LOOK_MS = 100;

export interface HoardGuardHooks {
  prefetch: Prefetch;
  /** Jobs the node holds now, buffered and running. */
  reserved(): number;
  /** When the oldest job held and not started was handed to the pool (performance.now()), if any. */
  oldestUnstartedAt(): number | undefined;
  /** Takes back up to `n` jobs not yet written to a child, the newest first, and returns them to their queues; how many it took. */
  giveBack(n: number): number;
  /** False once the node stops fetching: what it holds then is given back by the stop itself. */
  running(): boolean;
  log: Logger;
  /** The clock oldestUnstartedAt() reads (ms). */
  now?: () => number;
}

/**
 * Keeps the prefetch's promise to other nodes: quick jobs may be held past
 * the count cap (PREFETCH_WORK_MS), and if they turn slow, what is held
 * past it goes back to the queues (Prefetch.excess) instead of waiting
 * behind this node's children. Looks every GIVE_BACK_LOOK_MS, and only
 * while the node holds that many, by a timer that never keeps the process
 * alive.
 */
export class HoardGuard {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly hooks: HoardGuardHooks) {}

  /** Jobs arrived: look soon if the node now holds past the count cap. */
  arrived(): void {
    if (this.timer !== undefined || !this.hooks.running()) return;
    if (this.hooks.reserved() > this.hooks.prefetch.giveBackAbove) this.arm();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    this.timer = setTimeout(() => this.look(), GIVE_BACK_LOOK_MS);
    this.timer.unref();
  }

  private look(): void {
    this.timer = undefined;
    if (!this.hooks.running()) return;
    const { prefetch } = this.hooks;
    const reserved = this.hooks.reserved();
    if (reserved <= prefetch.giveBackAbove) return;
    const oldest = this.hooks.oldestUnstartedAt();
    const now = this.hooks.now ?? (() => performance.now());
    const n = oldest === undefined ? 0 : prefetch.excess(reserved, now() - oldest);
    const given = n > 0 ? this.hooks.giveBack(n) : 0;
    if (given > 0) {
      prefetch.gaveBack();
      this.hooks.log.info(
        { givenBack: given, held: reserved, keep: prefetch.giveBackAbove },
        'jobs held past the prefetch cap have turned slow; giving them back to their queues for other nodes',
      );
    }
    this.arm();
  }
}
