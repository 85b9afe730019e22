import type { LeaderLease } from '../types.js';

/** The memory twin of the leader lease in heartbeat-n.lua: a holder, a fencing token that only grows, a deadline. */
export class Leadership {
  private node: string | undefined;
  private token = 0;
  private until = 0;

  /**
   * A beat of `nodeId` standing for leader: renews the lease it holds, or
   * takes a lapsed one (token + 1). Returns the holder, and the deadline of
   * another holder's lease (when to beat to take over).
   */
  stand(nodeId: string, leaseMs: number, now: number): { leader: LeaderLease; until?: number } {
    if (this.node === nodeId && this.until >= now) {
      this.until = now + leaseMs;
    } else if (this.node === undefined || this.until < now) {
      this.node = nodeId;
      this.token++;
      this.until = now + leaseMs;
    } else {
      return { leader: { nodeId: this.node, token: this.token }, until: this.until };
    }
    return { leader: { nodeId, token: this.token } };
  }

  /** Frees the lease if `nodeId` holds it (it left); the token stays, so the next holder's is higher. */
  release(nodeId: string): boolean {
    if (this.node !== nodeId) return false;
    this.node = undefined;
    this.until = 0;
    return true;
  }

  holder(now: number): LeaderLease | undefined {
    return this.node !== undefined && this.until >= now ? { nodeId: this.node, token: this.token } : undefined;
  }
}
