import type { RevokedJob } from '../broker/types.js';

/**
 * The revoked job ids a node remembers (loaded when it registers, added to
 * by revoke control requests), each until it expires, and no more than the
 * broker's `revokeMax` (the oldest go first, as in the broker's set): a
 * burst of revokes within `revokeTtl` costs each node what it costs Redis.
 * Checking a delivery is one Map lookup: the fetch path gains no Redis call.
 */
export class Revocations {
  /** Job id -> epoch ms it is forgotten; in the order added (about expiry order). */
  private readonly ids = new Map<string, number>();

  constructor(
    /** Most ids kept (the broker's revokeMax). */
    private readonly max: number,
  ) {}

  get size(): number {
    return this.ids.size;
  }

  has(id: string): boolean {
    const until = this.ids.get(id);
    return until !== undefined && until > Date.now();
  }

  /** Replaces what is remembered with the broker's list, oldest first (a node that registers, or registers again). */
  load(jobs: readonly RevokedJob[]): void {
    this.ids.clear();
    for (const job of jobs.slice(-this.max)) this.ids.set(job.id, job.expiresAt);
  }

  /**
   * Of the broker's list (oldest first), those not remembered here, among
   * the newest `max` only: older ones would be dropped again at once, and
   * would push out newer ones first.
   */
  untold(jobs: readonly RevokedJob[]): RevokedJob[] {
    return jobs.slice(-this.max).filter((job) => !this.has(job.id));
  }

  add(ids: readonly string[], expiresAt: number): void {
    for (const id of ids) {
      this.ids.delete(id);
      this.ids.set(id, expiresAt);
    }
    this.forget(Date.now());
  }

  /**
   * Drops the oldest ids past `max`, then expired ids from the front: their
   * order is about their expiry order, so this stops at the first live one.
   */
  private forget(now: number): void {
    for (const [id, until] of this.ids) {
      if (until > now && this.ids.size <= this.max) return;
      this.ids.delete(id);
    }
  }
}
