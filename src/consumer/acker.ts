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
  /** A batch is on the wire (sent here or carried by a fetch): the next one waits, so batches reach the broker in order. */
  private inFlight = false;
  /** Settles when the batch a fetch carries has its answer. */
  private carried: Promise<void> | undefined;

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
    if (this.running === undefined && this.carried === undefined && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Lets a fetch carry the settlements gathered so far in its own round trip
   * (one broker call instead of two under load). Only when no batch is on the
   * wire, so batches stay in order; if the fetch fails they are queued again
   * in front and sent by the usual retry loop.
   */
  async carry<T>(fetch: (settle: Settlement[]) => Promise<T>): Promise<T> {
    if (this.inFlight || this.queue.length === 0) return fetch([]);
    const batch = this.queue;
    this.queue = [];
    this.inFlight = true;
    let done!: () => void;
    this.carried = new Promise<void>((resolve) => (done = resolve));
    try {
      return await fetch(batch);
    } catch (err) {
      this.queue = batch.concat(this.queue);
      throw err;
    } finally {
      this.inFlight = false;
      this.carried = undefined;
      done();
      if (this.running === undefined) {
        if (this.queue.length > 0) this.running = this.run();
        else this.wakeIdle();
      }
    }
  }

  private async run(): Promise<void> {
    for (;;) {
      if (this.carried !== undefined) {
        await this.carried;
        continue;
      }
      if (this.queue.length === 0) break;
      const batch = this.queue;
      this.queue = [];
      this.inFlight = true;
      try {
        await this.broker.settle(batch);
        if (this.failures > 0) this.log.info({ failures: this.failures }, 'settlements are reaching the broker again');
        this.failures = 0;
      } catch (err) {
        this.queue = batch.concat(this.queue);
        const wait = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** this.failures++);
        this.log.warn({ err, pending: this.queue.length, retryInMs: wait }, 'could not settle jobs with the broker; will retry');
        // The failed batch is back at the front: a fetch may carry it (and what followed) during the pause.
        this.inFlight = false;
        await new Promise((resolve) => setTimeout(resolve, wait));
      } finally {
        this.inFlight = false;
      }
    }
    this.running = undefined;
    this.wakeIdle();
  }

  private wakeIdle(): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
