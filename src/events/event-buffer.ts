import type { Logger } from 'pino';
import { messageOf } from '../errors.js';
import type { EventCarrier } from '../broker/types.js';
import type { EventBatch, JobStep } from './event-batch.js';
import { boundEvent } from './event-bounds.js';
import type { NodeEvent } from './node-event.js';

/** Most events one write carries (one stream entry); the rest ride the next one. */
export const EVENTS_PER_WRITE = 256;
/** Fewest events a write carries unless they have waited CARRY_AFTER_MS: a busy node adds one XADD per this many events, not one per write. */
export const EVENTS_PER_CARRY = 64;
/** Events held this long ride the next write however few they are. */
const CARRY_AFTER_MS = 50;
/** Most events held while no write gets them to the broker (Redis away, or at maxmemory): the oldest are dropped past it. */
export const HELD_MAX = 10_000;
/** Past HELD_MAX the oldest are dropped down to HELD_MAX - DROP_BLOCK at once: no shift of the whole buffer per event. */
export const DROP_BLOCK = HELD_MAX / 10;
/** Events no write carried within this long are written on their own (an idle node's pool events); after a failed write, the wait before the next try. */
export const FLUSH_AFTER_MS = 250;

/**
 * A node's outgoing events. They ride in the writes the node makes anyway
 * (a fetch or settlement takes them all once EVENTS_PER_CARRY are held or
 * the oldest waited CARRY_AFTER_MS, as entries of up to EVENTS_PER_WRITE):
 * no round trip per job, and a busy node's writes carry what it makes
 * however many jobs each fetch brings. What no write carried within
 * FLUSH_AFTER_MS is written on its own. A write that fails gives its events
 * back, ahead of newer ones, to be tried again FLUSH_AFTER_MS later; only
 * past HELD_MAX are events lost (with a warning), or, when a write's reply
 * was lost after it landed, written twice. Best effort, not a log of record.
 */
export class EventBuffer implements EventCarrier {
  private held: (NodeEvent | JobStep)[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Events dropped since they last reached the broker (0: none, and the next drop warns). */
  private dropped = 0;
  /** When the oldest held event was pushed. */
  private heldSince = 0;
  /** After a failed write, no write carries events before this time (epoch ms): the flush timer tries first. */
  private retryAt = 0;
  /** A flush's writes are on their way: no other write carries newer events ahead of them. */
  private flushing: Promise<void> | undefined;
  /** After close(): nothing is held or retried (a write still on its way that fails is not put back). */
  private closed = false;
  /** What the last failed write failed with, until a write gets through: the drop warning says it. */
  private failure: unknown;

  constructor(
    /** The node every event here is from. */
    readonly node: string,
    private readonly publish: (batch: EventBatch) => Promise<void>,
    private readonly log: Logger,
  ) {}

  /** `whole`: where the job's values a cut keeps in part are kept whole (none for an event of no job). */
  push(event: NodeEvent | JobStep, whole?: string): void {
    if (this.closed) return;
    if (this.held.length === 0) this.heldSince = Date.now();
    // Job steps carry no value of a task's; the rest are cut to the bound here, before they are held.
    this.held.push(Array.isArray(event) ? event : boundEvent(event, whole));
    this.trim();
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  /**
   * What the next write carries: every event held, as batches of up to
   * EVENTS_PER_WRITE (one stream entry each); none while they are too few
   * and too fresh to be worth a command, for FLUSH_AFTER_MS after a write
   * failed, or while a flush writes (the stream keeps the order events
   * happened in). The writer then calls carried() or putBack().
   */
  take(): EventBatch[] {
    const n = this.held.length;
    if (n === 0 || this.flushing !== undefined) return [];
    const now = Date.now();
    if (now < this.retryAt || (n < EVENTS_PER_CARRY && now - this.heldSince < CARRY_AFTER_MS)) return [];
    return this.takeAll();
  }

  /** Everything held, as batches of up to EVENTS_PER_WRITE, oldest first; no write of its own is due any more. */
  private takeAll(): EventBatch[] {
    const held = this.held;
    const n = held.length;
    if (n === 0) return [];
    this.held = [];
    clearTimeout(this.timer);
    this.timer = undefined;
    if (n <= EVENTS_PER_WRITE) return [{ node: this.node, items: held }];
    const batches: EventBatch[] = [];
    for (let i = 0; i < n; i += EVENTS_PER_WRITE)
      batches.push({ node: this.node, items: held.slice(i, i + EVENTS_PER_WRITE) });
    return batches;
  }

  /** The write that carried what take() gave reached the broker. */
  carried(): void {
    this.reached();
  }

  /**
   * The write that carried these failed: they are held again, ahead of
   * those pushed since, and the next try is the flush timer's.
   */
  putBack(batches: readonly EventBatch[], reason?: unknown): void {
    const items = batches.flatMap((b) => b.items);
    if (items.length === 0 || this.closed) return;
    if (reason !== undefined) this.failure = reason;
    this.held = this.held.length === 0 ? items : items.concat(this.held);
    // Old enough to ride the first write after the wait, however few.
    this.heldSince = 0;
    this.retryAt = Date.now() + FLUSH_AFTER_MS;
    this.trim();
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  /** Writes what is held now, on its own (at stop, when no write came to carry it, or to retry a failed one). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    // One flush at a time, in order: a later one (the last, at stop) writes what the earlier left.
    while (this.flushing !== undefined) await this.flushing;
    this.flushing = this.writeHeld();
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
  }

  /** Writes what is held, one batch per write, then what came meanwhile; a failed write puts back itself and the rest. */
  private async writeHeld(): Promise<void> {
    for (let batches = this.takeAll(); batches.length > 0; batches = this.takeAll()) {
      for (const [i, batch] of batches.entries()) {
        try {
          await this.publish(batch);
        } catch (err) {
          this.log.debug({ err, events: batch.items.length }, 'events could not be written; trying again later');
          this.putBack(batches.slice(i), err);
          return;
        }
        this.retryAt = 0;
        this.reached();
      }
    }
  }

  /** Stops the flush timer (after a last flush()); what is still held, or put back later, is lost. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.held = [];
  }

  /** Past HELD_MAX, drops the oldest in one block; the first drop since events last reached the broker warns. */
  private trim(): void {
    if (this.held.length <= HELD_MAX) return;
    const drop = this.held.length - (HELD_MAX - DROP_BLOCK);
    this.held.splice(0, drop);
    // The reason too: with only the events' key refused (written over), nothing else the node logs says why.
    if (this.dropped === 0)
      this.log.warn(
        { held: HELD_MAX, err: this.failure },
        `events are not reaching the broker; dropping the oldest${this.failure === undefined ? '' : `: ${messageOf(this.failure)}`}`,
      );
    this.dropped += drop;
  }

  private reached(): void {
    this.failure = undefined;
    if (this.dropped === 0) return;
    this.log.info({ dropped: this.dropped }, 'events reach the broker again');
    this.dropped = 0;
  }
}
