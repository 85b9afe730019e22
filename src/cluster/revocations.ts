import type { RevokedJob } from '../broker/types.js';

/**
 * The revoked job ids a node remembers (loaded when it registers, added to
 * by revoke control requests), each until it expires. Checking a delivery
 * is one Map lookup: the fetch path gains no Redis call.
 */
export class Revocations {
  /** Job id -> epoch ms it is forgotten; in the order added (about expiry order). */
  private readonly ids = new Map<string, number>();

  get size(): number {
    return this.ids.size;
  }

  has(id: string): boolean {
    const until = this.ids.get(id);
    return until !== undefined && until > Date.now();
  }

  /** Replaces what is remembered with the broker's list (a node that registers, or registers again). */
  load(jobs: readonly RevokedJob[]): void {
    this.ids.clear();
    for (const job of jobs) this.ids.set(job.id, job.expiresAt);
  }

  add(ids: readonly string[], expiresAt: number): void {
    for (const id of ids) {
      this.ids.delete(id);
      this.ids.set(id, expiresAt);
    }
    this.forgetExpired(Date.now());
  }

  /** Drops expired ids from the front: their order is about their expiry order, so this stops at the first live one. */
  private forgetExpired(now: number): void {
    for (const [id, until] of this.ids) {
      if (until > now) return;
      this.ids.delete(id);
    }
  }
}
