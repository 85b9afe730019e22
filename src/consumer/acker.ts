import type { Logger } from 'pino';
import type { Broker, Settlement } from '../broker/types.js';

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * Sends settlements (acks, retries, dead letters, results) to the broker in
 * batches: while one batch is on the wire the next one gathers, so under load
 * a round trip carries many jobs and when idle a result leaves at once.
 * A batch that fails (Redis away) is kept and sent again: an outcome the pool
 * produced is never dropped.
 */
export class Acker {
  private queue: Settlement[] = [];
  private running: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];
  private failures = 0;

  constructor(
    private readonly broker: Broker,
    private readonly log: Logger,
  ) {}

  /** Settlements not yet confirmed by the broker. */
  get backlog(): number {
    return this.queue.length;
  }

  push(settlement: Settlement): void {
    this.queue.push(settlement);
    if (this.running === undefined) {
      this.running = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.run());
    }
  }

  /** Resolves once everything pushed so far has been confirmed by the broker. */
  flush(): Promise<void> {
    if (this.running === undefined && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async run(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await this.broker.settle(batch);
        if (this.failures > 0) this.log.info({ failures: this.failures }, 'settlements are reaching the broker again');
        this.failures = 0;
      } catch (err) {
        this.queue = batch.concat(this.queue);
        const wait = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** this.failures++);
        this.log.warn({ err, pending: this.queue.length, retryInMs: wait }, 'could not settle jobs with the broker; will retry');
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
    this.running = undefined;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
