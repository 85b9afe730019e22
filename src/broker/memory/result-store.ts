import { timerMs } from '../../util/units.js';
import { isFinalState } from '../job-state.js';
import type { AnnouncedResults, ResultRecord } from '../types.js';
import { ExpiryHeap } from './expiry-heap.js';

interface StoredResult {
  record: ResultRecord;
  expiresAt: number;
}

/** Shortest gap between two sweeps of expired results (ms): sweeps batch up under load. */
const SWEEP_GRANULARITY = 1_000;
/** Most ids waiting on one client's reply list (the oldest go first), as LTRIM bounds it in Redis. */
export const REPLY_MAX = 10_000;

/**
 * Results with a TTL, and the reply lists of waiting clients (the memory
 * twin of `res:<id>` + `reply:<clientId>`). Records are stored and returned
 * as copies. An expired result is gone on read; a timer set to the earliest
 * expiry sweeps the rest, each at its own time (a result kept a day does not
 * hold back those kept a minute stored after it), so the map stays bounded. A reply list keeps at
 * most REPLY_MAX ids; the sweep takes off it the ids whose result expired
 * (kept aside, to be reported gone) and drops a list whose ids all expired: a
 * client that enqueues and never waits costs a bounded list. A client
 * waiting for its results is woken when one is announced to it: nothing polls.
 */
export class ResultStore {
  private readonly results = new Map<string, StoredResult>();
  /** Every stored id is in it at or before its expiry (a rewrite that keeps it longer is found there and put back). */
  private readonly expiries = new ExpiryHeap<string>();
  private readonly replies = new Map<string, string[]>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Clients whose reply list dropped ids since their last take. */
  private readonly overflowed = new Set<string>();
  /**
   * Ids the sweep took off a reply list that still has live ones (their
   * result expired): the client is told they are gone, as Redis keeps them
   * in the list until the list itself expires.
   */
  private readonly expired = new Map<string, string[]>();
  private sweepTimer: NodeJS.Timeout | undefined;
  /** When the armed sweep fires (epoch ms). */
  private sweepAt = Number.POSITIVE_INFINITY;

  set(record: ResultRecord, ttlMs: number, now: number): void {
    const expiresAt = now + ttlMs;
    const previous = this.results.get(record.id);
    this.results.set(record.id, { record: structuredClone(record), expiresAt });
    if (previous === undefined || previous.expiresAt > expiresAt) this.expiries.push(expiresAt, record.id);
    this.armSweep(expiresAt, now);
  }

  get(id: string, now: number): ResultRecord | undefined {
    const stored = this.results.get(id);
    if (stored === undefined) return undefined;
    if (stored.expiresAt <= now) {
      this.results.delete(id);
      return undefined;
    }
    return structuredClone(stored.record);
  }

  /**
   * Drops job `id`'s result, and its announcement to `clientId` not taken
   * yet (a dead job retried: its failure is no longer its outcome, and a
   * wait must not be handed it, nor told it is gone).
   */
  delete(id: string, clientId?: string): void {
    this.results.delete(id);
    if (clientId === undefined) return;
    const left = this.replies.get(clientId)?.filter((announced) => announced !== id);
    if (left === undefined) return;
    if (left.length > 0) this.replies.set(clientId, left);
    else this.replies.delete(clientId);
  }

  /** Whether a live result of job `id` is stored (without copying it). */
  has(id: string, now: number): boolean {
    const stored = this.results.get(id);
    return stored !== undefined && stored.expiresAt > now;
  }

  /** Tells `clientId` that the result of job `id` is ready (a final state). */
  announce(clientId: string, id: string): void {
    const list = this.replies.get(clientId);
    if (list === undefined) this.replies.set(clientId, [id]);
    else {
      list.push(id);
      if (list.length > REPLY_MAX) {
        list.splice(0, list.length - REPLY_MAX);
        this.overflowed.add(clientId);
      }
    }
    const waiting = this.waiters.get(clientId);
    if (waiting !== undefined) for (const wake of [...waiting]) wake();
  }

  /**
   * The results announced to `clientId` since its last take, and the ids
   * among them whose result expired; undefined when none was announced.
   * `missed` says its list dropped ids since (as the Redis broker does).
   */
  takeReplies(clientId: string, now: number): AnnouncedResults | undefined {
    const ids = this.replies.get(clientId);
    const gone = this.expired.get(clientId) ?? [];
    if (ids === undefined && gone.length === 0) return undefined;
    this.replies.delete(clientId);
    this.expired.delete(clientId);
    const records: ResultRecord[] = [];
    for (const id of ids ?? []) {
      const record = this.get(id, now);
      if (record === undefined) gone.push(id);
      else if (isFinalState(record.state)) records.push(record);
    }
    return { records, gone, missed: this.overflowed.delete(clientId) };
  }

  /** Calls `wake` whenever a result is announced to `clientId`; returns the unsubscribe function. */
  onAnnounce(clientId: string, wake: () => void): () => void {
    let set = this.waiters.get(clientId);
    if (set === undefined) {
      set = new Set();
      this.waiters.set(clientId, set);
    }
    set.add(wake);
    return () => {
      const current = this.waiters.get(clientId);
      current?.delete(wake);
      if (current?.size === 0) this.waiters.delete(clientId);
    };
  }

  /**
   * The ids waiting on `clientId`'s reply list, oldest first (what LRANGE
   * shows of the Redis list). For tests.
   * @internal
   */
  replyIds(clientId: string): readonly string[] {
    return [...(this.replies.get(clientId) ?? [])];
  }

  dispose(): void {
    clearTimeout(this.sweepTimer);
    this.sweepTimer = undefined;
    this.sweepAt = Number.POSITIVE_INFINITY;
  }

  /** Arms the sweep for `at` (no sooner than SWEEP_GRANULARITY from now), unless one is armed to fire before. */
  private armSweep(at: number, now: number): void {
    const delay = timerMs(Math.max(at - now, SWEEP_GRANULARITY));
    if (this.sweepTimer !== undefined && this.sweepAt <= now + delay) return;
    clearTimeout(this.sweepTimer);
    this.sweepAt = now + delay;
    this.sweepTimer = setTimeout(() => this.sweep(), delay);
    this.sweepTimer.unref();
  }

  /** Drops the results whose time has come, and reply ids whose result is gone. */
  private sweep(): void {
    this.sweepTimer = undefined;
    this.sweepAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    for (const id of this.expiries.takeDue(now)) {
      const stored = this.results.get(id);
      if (stored === undefined) continue;
      // Rewritten since with a longer TTL: due later.
      if (stored.expiresAt > now) this.expiries.push(stored.expiresAt, id);
      else this.results.delete(id);
    }
    for (const [clientId, ids] of this.replies) {
      const live = ids.filter((id) => this.results.has(id));
      if (live.length === 0) {
        // The whole list expired (in Redis too: its TTL runs from the last announcement).
        // Ids it dropped are older than these, so their results are gone too.
        this.replies.delete(clientId);
        this.overflowed.delete(clientId);
        this.expired.delete(clientId);
      } else if (live.length < ids.length) {
        this.replies.set(clientId, live);
        const gone = this.expired.get(clientId) ?? [];
        for (const id of ids) if (!this.results.has(id)) gone.push(id);
        this.expired.set(clientId, gone.slice(-REPLY_MAX));
      }
    }
    const next = this.expiries.nextAt;
    if (next !== undefined) this.armSweep(next, now);
  }
}
