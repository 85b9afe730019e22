import type { Logger } from 'pino';
import type { NodeEvent } from './node-event.js';

/** Most events one write carries (one stream entry); the rest ride the next one. */
export const EVENTS_PER_WRITE = 256;
/** Most events held while nothing carries them (Redis away): the oldest are dropped past it. */
const HELD_MAX = 10_000;
/** Events no write carried within this long are written on their own (an idle node's pool events). */
const FLUSH_AFTER_MS = 250;

/**
 * A node's outgoing events. They ride in the writes the node makes anyway
 * (each fetch or settlement takes up to EVENTS_PER_WRITE): no round trip per
 * job. What no write carries within FLUSH_AFTER_MS (a node gone idle, a
 * child that died between jobs) is written on its own. Events are best
 * effort: a write that fails loses the events it carried.
 */
export class EventBuffer {
  private held: NodeEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private dropped = 0;

  constructor(
    private readonly publish: (events: NodeEvent[]) => Promise<void>,
    private readonly log: Logger,
  ) {}

  push(event: NodeEvent): void {
    this.held.push(event);
    if (this.held.length > HELD_MAX) {
      this.held.splice(0, this.held.length - HELD_MAX);
      if (this.dropped++ === 0)
        this.log.warn({ held: HELD_MAX }, 'events are not reaching the broker; dropping the oldest');
    }
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  /** What the next write carries (undefined: nothing). */
  take(): NodeEvent[] | undefined {
    if (this.held.length === 0) return undefined;
    if (this.held.length <= EVENTS_PER_WRITE) {
      const all = this.held;
      this.held = [];
      // Carried: no write of its own is due.
      clearTimeout(this.timer);
      this.timer = undefined;
      return all;
    }
    return this.held.splice(0, EVENTS_PER_WRITE);
  }

  /** Writes what is held now, on its own (at stop, or when no write came to carry it). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (let batch = this.take(); batch !== undefined; batch = this.take()) {
      try {
        await this.publish(batch);
        if (this.dropped > 0) this.log.info({ dropped: this.dropped }, 'events reach the broker again');
        this.dropped = 0;
      } catch (err) {
        this.log.debug({ err, events: batch.length }, 'events could not be written; they are lost');
        return;
      }
    }
  }

  /** Stops the flush timer (after a last flush()). */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.held = [];
  }
}
