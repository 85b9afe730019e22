import { CONTROL_REPLY_TTL_MS } from '../control-codec.js';
import type { ControlReply, ControlRequest } from '../types.js';

interface Posted {
  request: ControlRequest;
  expiresAt: number;
}

/**
 * The memory twin of the Redis control lists: requests waiting per node
 * (taken by its heartbeat, dropped after their TTL) and replies per request,
 * with waiters woken when a reply arrives.
 */
export class ControlBoard {
  private readonly inbox = new Map<string, Posted[]>();
  private readonly replies = new Map<string, { replies: ControlReply[]; expiresAt: number }>();
  private readonly listeners = new Map<string, Set<() => void>>();
  private readonly watchers = new Set<(nodeId: string) => void>();
  /** Nodes posted to since their last beat (the Redis lease's half-millisecond flag). */
  private readonly posted = new Set<string>();

  post(nodeId: string, request: ControlRequest, ttlMs: number, now: number): void {
    const list = this.inbox.get(nodeId) ?? [];
    list.push({ request: structuredClone(request), expiresAt: now + ttlMs });
    this.inbox.set(nodeId, list);
    this.posted.add(nodeId);
    for (const wake of [...this.watchers]) queueMicrotask(() => wake(nodeId));
  }

  /** Wakes every watcher with `id` (as a post to it does), with nothing posted: LEADER_RELEASED. */
  wake(id: string): void {
    for (const wake of [...this.watchers]) queueMicrotask(() => wake(id));
  }

  /** Calls `wake(nodeId)` whenever a request is posted; returns the unsubscribe. */
  watch(wake: (nodeId: string) => void): () => void {
    this.watchers.add(wake);
    return () => this.watchers.delete(wake);
  }

  /** Flags nodes as a post does, with nothing posted: a setting changed (flagLeases in the Redis scripts). */
  flag(nodeIds: Iterable<string>): void {
    for (const id of nodeIds) this.posted.add(id);
  }

  /** Whether requests were posted to the node since this was last asked (its beat asks); clears the flag. */
  postedSinceBeat(nodeId: string): boolean {
    return this.posted.delete(nodeId);
  }

  take(nodeId: string, now: number): ControlRequest[] {
    const list = this.inbox.get(nodeId);
    if (list === undefined) return [];
    this.inbox.delete(nodeId);
    return list.filter((p) => p.expiresAt > now).map((p) => p.request);
  }

  reply(requestId: string, reply: ControlReply, now: number): void {
    this.sweep(now);
    const entry = this.replies.get(requestId) ?? { replies: [], expiresAt: 0 };
    entry.replies.push(structuredClone(reply));
    entry.expiresAt = now + CONTROL_REPLY_TTL_MS;
    this.replies.set(requestId, entry);
    for (const wake of this.listeners.get(requestId) ?? []) wake();
  }

  /** Takes up to `count` replies to `requestId`. */
  collect(requestId: string, count: number): ControlReply[] {
    const entry = this.replies.get(requestId);
    if (entry === undefined) return [];
    const out = entry.replies.splice(0, count);
    if (entry.replies.length === 0) this.replies.delete(requestId);
    return out;
  }

  /** Calls `wake` whenever a reply to `requestId` arrives; returns the unsubscribe. */
  listen(requestId: string, wake: () => void): () => void {
    const set = this.listeners.get(requestId) ?? new Set();
    set.add(wake);
    this.listeners.set(requestId, set);
    return () => {
      set.delete(wake);
      if (set.size === 0) this.listeners.delete(requestId);
    };
  }

  forget(nodeId: string): void {
    this.inbox.delete(nodeId);
    this.posted.delete(nodeId);
  }

  private sweep(now: number): void {
    for (const [id, entry] of this.replies) if (entry.expiresAt <= now) this.replies.delete(id);
  }
}
