import type { Logger } from 'pino';
import type { LeaderLease } from '../broker/types.js';
import { messageOf } from '../errors.js';

/** The leader runs its duties on one beat in this many (the first included): housekeeping, not a hot path. */
const DUTY_EVERY = 8;

/**
 * This node's view of the leader lease (pyspider's ZooKeeper leader, as a
 * Redis lease renewed with the heartbeat): logs a change of holder, and
 * while this node leads, runs the cluster's singleton duties now and then.
 * Nothing depends on the leader for correctness: two nodes that both
 * believe they lead for a moment only do the same housekeeping twice.
 */
export class Leadership {
  private lease: LeaderLease | undefined;
  private beats = 0;
  private running: Promise<void> | undefined;

  constructor(
    private readonly me: () => string,
    /** Given the lease they run under: the broker fences what they change with it. */
    private readonly duties: (lease: LeaderLease) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** True while the last beat said this node holds the lease. */
  get leading(): boolean {
    return this.lease !== undefined && this.lease.nodeId === this.me();
  }

  /** The holder a beat reported. */
  update(lease: LeaderLease): void {
    const before = this.lease;
    this.lease = lease;
    if (before?.token !== lease.token) {
      if (lease.nodeId === this.me())
        this.log.info({ token: lease.token }, `this node leads the cluster now (fencing token ${lease.token})`);
      else if (before?.nodeId === this.me())
        this.log.info({ leader: lease.nodeId, token: lease.token }, `node ${lease.nodeId} leads the cluster now`);
      this.beats = 0;
    }
    if (!this.leading || this.beats++ % DUTY_EVERY !== 0 || this.running !== undefined) return;
    this.running = this.duties(lease)
      .catch((err: unknown) => this.log.warn({ err }, `the leader's housekeeping failed: ${messageOf(err)}`))
      .finally(() => (this.running = undefined));
  }

  /** Waits for duties under way (a stopping node). */
  async stop(): Promise<void> {
    await this.running;
  }
}
