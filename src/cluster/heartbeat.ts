import type { Logger } from 'pino';
import type { Broker } from '../broker/types.js';

export interface HeartbeatHooks {
  nodeId(): string;
  queues(): readonly string[];
  /** The lease is gone: another node owns this node's jobs now. */
  onFenced(): Promise<void>;
  /** The earliest due time of a delayed job on this node's queues. */
  onDue(at: number | undefined): void;
}

/**
 * Renews this node's lease every `interval` (a quarter of the lease) and does
 * the cluster's housekeeping that rides on it: a node whose lease expired is
 * recovered here — its reserved jobs go back to their queues (pyspider's
 * ZooKeeper ephemeral nodes, as Redis leases). Beats are sequential: a slow
 * Redis never piles them up.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private running = false;
  private failures = 0;

  constructor(
    private readonly broker: Broker,
    private readonly interval: number,
    private readonly maxRedeliveries: number,
    private readonly hooks: HeartbeatHooks,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.running = true;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.beating;
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.beating = this.beat().finally(() => {
        this.beating = undefined;
        this.schedule();
      });
    }, this.interval);
  }

  /** One beat; public so a test or a control command can force one. */
  async beat(): Promise<void> {
    const me = this.hooks.nodeId();
    try {
      const reply = await this.broker.heartbeat(me, this.hooks.queues());
      if (this.failures > 0) this.log.info({ failures: this.failures }, 'heartbeats are reaching the broker again');
      this.failures = 0;
      if (reply.fenced) {
        await this.hooks.onFenced();
        return;
      }
      this.hooks.onDue(reply.nextDueAt);
      for (const dead of reply.expired) {
        const moved = await this.broker.recover(dead, me, this.maxRedeliveries);
        this.log.warn({ deadNode: dead, jobs: moved }, `recovered the jobs of node ${dead}, whose lease expired`);
      }
    } catch (err) {
      this.failures++;
      this.log.warn({ err, failures: this.failures }, 'heartbeat failed; the lease expires unless a later one succeeds');
    }
  }
}
