import type {
  Broker,
  BrokerOptions,
  DeadJob,
  Delivery,
  FetchReply,
  FetchRequest,
  HeartbeatReply,
  JobRecord,
  NewJob,
  NodeInfo,
  QueueCounts,
  ResultRecord,
  Settlement,
  WaitReply,
} from '../types.js';
import { MemoryState, type MemoryQueue } from './memory-state.js';

const DEFAULTS = { resultTtl: 86_400_000, leaseMs: 20_000, deadMax: 10_000 };
const registry = new Map<string, MemoryState>();

/**
 * The embedded broker (`memory://[name]`): one process, the same semantics as
 * the Redis one — reserved deliveries until settled, given-back jobs first,
 * delayed jobs promoted when due, a dead set, results with a TTL, leases and
 * recovery — so the demo and tests behave as production does. Blocked waits
 * sleep until a change or the next due time; nothing polls.
 */
export class MemoryBroker implements Broker {
  readonly displayUrl: string;
  readonly leaseMs: number;
  private readonly resultTtl: number;
  private readonly deadMax: number;
  private closed = false;

  private constructor(
    private readonly name: string,
    private readonly state: MemoryState,
    options: BrokerOptions,
  ) {
    this.displayUrl = `memory://${name}`;
    this.leaseMs = options.leaseMs ?? DEFAULTS.leaseMs;
    this.resultTtl = options.resultTtl ?? DEFAULTS.resultTtl;
    this.deadMax = options.deadMax ?? DEFAULTS.deadMax;
  }

  /** Every handle opened on the same URL (and namespace) in this process shares one state. */
  static open(url: string, options: BrokerOptions = {}): MemoryBroker {
    const name = url.slice('memory://'.length) || 'default';
    const key = `${options.namespace ?? 'prefork'}/${name}`;
    let state = registry.get(key);
    if (state === undefined) {
      state = new MemoryState();
      registry.set(key, state);
    }
    state.handles++;
    return new MemoryBroker(key, state, options);
  }

  async connect(): Promise<void> {}

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.state.changed();
    if (--this.state.handles === 0) registry.delete(this.name);
  }

  async enqueue(jobs: readonly NewJob[]): Promise<void> {
    const now = Date.now();
    for (const input of jobs) {
      const { delay, eta, ...rest } = input;
      const job = structuredClone(rest) as JobRecord;
      const q = this.state.queue(job.queue);
      const dueAt = eta ?? (delay !== undefined && delay > 0 ? now + delay : undefined);
      if (dueAt !== undefined && dueAt > now) q.addDelayed({ dueAt, job });
      else q.main.push(job);
    }
    this.state.changed();
  }

  async getResult(id: string): Promise<ResultRecord | undefined> {
    return this.state.getResult(id, Date.now());
  }

  async waitForResults(clientId: string, timeoutMs: number): Promise<ResultRecord[]> {
    const take = (): ResultRecord[] | undefined => {
      const ids = this.state.replies.get(clientId);
      if (ids === undefined || ids.length === 0) return undefined;
      this.state.replies.delete(clientId);
      const now = Date.now();
      return ids.map((id) => this.state.getResult(id, now)).filter((r): r is ResultRecord => r !== undefined);
    };
    return (await this.blockUntil(take, timeoutMs, undefined)) ?? [];
  }

  async fetch(request: FetchRequest): Promise<FetchReply> {
    this.apply(request.settle);
    const now = Date.now();
    const queues = request.plan.map((p) => p.queue);
    if (!this.holdsLease(request.nodeId, now)) return { deliveries: [], nextDueAt: this.nextDueAt(queues), fenced: true };
    for (const name of queues) this.state.queue(name).promote(now);
    const deliveries: Delivery[] = [];
    let left = request.count;
    // First pass: each queue's quota; second pass: leftovers in plan order.
    for (const { queue, quota } of request.plan) left -= this.reserve(request.nodeId, queue, Math.min(quota, left), deliveries);
    for (const { queue } of request.plan) left -= this.reserve(request.nodeId, queue, left, deliveries);
    return { deliveries, nextDueAt: this.nextDueAt(queues), fenced: false };
  }

  async waitForWork(nodeId: string, queues: readonly string[], timeoutMs: number, signal: AbortSignal, count = 1): Promise<WaitReply> {
    const take = (): Delivery[] | undefined => {
      if (!this.holdsLease(nodeId, Date.now())) return undefined;
      const now = Date.now();
      const deliveries: Delivery[] = [];
      let left = count;
      for (const queue of queues) {
        this.state.queue(queue).promote(now);
        left -= this.reserve(nodeId, queue, left, deliveries);
      }
      return deliveries.length > 0 ? deliveries : undefined;
    };
    const deliveries = (await this.blockUntil(take, timeoutMs, signal, queues)) ?? [];
    return { deliveries, nextDueAt: this.nextDueAt(queues) };
  }

  async settle(settlements: readonly Settlement[]): Promise<void> {
    this.apply(settlements);
  }

  async register(node: NodeInfo): Promise<void> {
    this.state.nodes.set(node.id, { info: structuredClone(node), leaseUntil: Date.now() + this.leaseMs, reserved: new Set() });
    for (const queue of node.queues) this.state.queue(queue);
  }

  async heartbeat(nodeId: string, queues: readonly string[]): Promise<HeartbeatReply> {
    const now = Date.now();
    const node = this.state.nodes.get(nodeId);
    const fenced = node === undefined || node.leaseUntil <= now;
    if (!fenced) node.leaseUntil = now + this.leaseMs;
    const expired = [...this.state.nodes].filter(([id, n]) => id !== nodeId && n.leaseUntil <= now).map(([id]) => id);
    return { fenced, expired: fenced ? [] : expired, nextDueAt: this.nextDueAt(queues) };
  }

  async recover(deadNodeId: string, _byNodeId: string, maxRedeliveries: number): Promise<number> {
    const node = this.state.nodes.get(deadNodeId);
    // Only an expired lease is recovered: a live node keeps its jobs.
    if (node === undefined || node.leaseUntil > Date.now()) return 0;
    const moved = this.release(node.reserved, maxRedeliveries);
    this.state.nodes.delete(deadNodeId);
    this.state.changed();
    return moved;
  }

  async unregister(nodeId: string): Promise<void> {
    const node = this.state.nodes.get(nodeId);
    if (node === undefined) return;
    // Anything still held goes back (a clean stop has settled everything already).
    this.release(node.reserved, Infinity);
    this.state.nodes.delete(nodeId);
    this.state.changed();
  }

  async listNodes(): Promise<NodeInfo[]> {
    const now = Date.now();
    return [...this.state.nodes.values()].filter((n) => n.leaseUntil > now).map((n) => structuredClone(n.info));
  }

  async knownQueues(): Promise<string[]> {
    return [...this.state.queues.keys()].sort();
  }

  async counts(queues: readonly string[]): Promise<QueueCounts[]> {
    return queues.map((queue) => {
      const q = this.state.queue(queue);
      return { queue, waiting: q.waiting, reserved: q.reserved, delayed: q.delayed.length, dead: q.dead.length };
    });
  }

  async purge(queue: string): Promise<number> {
    const q = this.state.queue(queue);
    const n = q.waiting + q.delayed.length;
    q.main.drain();
    q.rd.drain();
    q.delayed.length = 0;
    return n;
  }

  async listDead(queue: string, limit: number): Promise<DeadJob[]> {
    return this.state.queue(queue).dead.slice(-limit).reverse().map((d) => structuredClone(d));
  }

  async retryDead(queue: string, ids: readonly string[] | undefined): Promise<number> {
    const q = this.state.queue(queue);
    const wanted = ids === undefined ? undefined : new Set(ids);
    const keep: DeadJob[] = [];
    let n = 0;
    for (const d of q.dead) {
      if (wanted !== undefined && !wanted.has(d.job.id)) {
        keep.push(d);
        continue;
      }
      q.main.push({ ...d.job, attempt: 0, redeliveries: 0 });
      n++;
    }
    q.dead.splice(0, q.dead.length, ...keep);
    this.state.changed();
    return n;
  }

  async purgeDead(queue: string): Promise<number> {
    const q = this.state.queue(queue);
    return q.dead.splice(0).length;
  }

  private holdsLease(nodeId: string, now: number): boolean {
    const node = this.state.nodes.get(nodeId);
    return node !== undefined && node.leaseUntil > now;
  }

  private reserve(nodeId: string, queue: string, max: number, out: Delivery[]): number {
    if (max <= 0) return 0;
    const q = this.state.queue(queue);
    const node = this.state.nodes.get(nodeId) as { reserved: Set<string> };
    let n = 0;
    for (let job = n < max ? q.take() : undefined; job !== undefined; job = n < max ? q.take() : undefined) {
      const delivery: Delivery = { receipt: this.state.nextReceipt(), queue, job: structuredClone(job) };
      this.state.reservations.set(delivery.receipt, { nodeId, delivery });
      node.reserved.add(delivery.receipt);
      q.reserved++;
      out.push(delivery);
      n++;
    }
    return n;
  }

  /** Ends a reservation; false when it is no longer held (recovered elsewhere): a fenced node's late settle then changes nothing. */
  private unreserve(receipt: string): JobRecord | undefined {
    const r = this.state.reservations.get(receipt);
    if (r === undefined) return undefined;
    this.state.reservations.delete(receipt);
    this.state.nodes.get(r.nodeId)?.reserved.delete(receipt);
    this.state.queue(r.delivery.queue).reserved--;
    return r.delivery.job;
  }

  private apply(settlements: readonly Settlement[]): void {
    if (settlements.length === 0) return;
    const now = Date.now();
    for (const s of settlements) {
      const job = s.kind === 'progress' ? undefined : this.unreserve(s.delivery.receipt);
      const q = this.state.queue(s.delivery.queue);
      if (job !== undefined) {
        if (s.kind === 'retry') q.addDelayed({ dueAt: now + s.delay, job: { ...job, attempt: job.attempt + 1 } });
        else if (s.kind === 'dead') this.bury(q, job, s.reason, now);
        else if (s.kind === 'giveBack') q.rd.push({ ...job, redeliveries: job.redeliveries + 1 });
      }
      // The result is written even for a late settle: the job did run.
      if (s.kind !== 'giveBack' && s.result !== undefined) {
        this.state.setResult(s.result, this.resultTtl, now);
        const { replyTo } = s.delivery.job;
        if (replyTo !== undefined && (s.result.state === 'SUCCESS' || s.result.state === 'FAILURE')) {
          const list = this.state.replies.get(replyTo);
          if (list) list.push(s.result.id);
          else this.state.replies.set(replyTo, [s.result.id]);
        }
      }
    }
    this.state.changed();
  }

  private bury(q: MemoryQueue, job: JobRecord, reason: string, now: number): void {
    q.dead.push({ job, reason, diedAt: now });
    if (q.dead.length > this.deadMax) q.dead.splice(0, q.dead.length - this.deadMax);
  }

  /** A node's reservations go back to their queues (served first), or to the dead set past `maxRedeliveries`. */
  private release(receipts: Set<string>, maxRedeliveries: number): number {
    const now = Date.now();
    let n = 0;
    for (const receipt of [...receipts]) {
      const r = this.state.reservations.get(receipt);
      const job = this.unreserve(receipt);
      if (job === undefined || r === undefined) continue;
      const q = this.state.queue(r.delivery.queue);
      const again = { ...job, redeliveries: job.redeliveries + 1 };
      if (again.redeliveries > maxRedeliveries) this.bury(q, again, `poison job: delivered ${again.redeliveries} times without an outcome`, now);
      else q.rd.push(again);
      n++;
    }
    return n;
  }

  private nextDueAt(queues: readonly string[]): number | undefined {
    let next: number | undefined;
    for (const name of queues) {
      const due = this.state.queues.get(name)?.nextDueAt;
      if (due !== undefined && (next === undefined || due < next)) next = due;
    }
    return next;
  }

  /**
   * Resolves with `take()`'s first defined answer, re-trying it only on a
   * change to the state or when the next delayed job of `queues` falls due;
   * undefined on timeout, abort or close.
   */
  private blockUntil<T>(take: () => T | undefined, timeoutMs: number, signal: AbortSignal | undefined, queues?: readonly string[]): Promise<T | undefined> {
    const first = take();
    if (first !== undefined || this.closed || signal?.aborted) return Promise.resolve(first);
    return new Promise((resolve) => {
      let dueTimer: NodeJS.Timeout | undefined;
      const finish = (value: T | undefined): void => {
        clearTimeout(deadline);
        clearTimeout(dueTimer);
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const armDue = (): void => {
        clearTimeout(dueTimer);
        const due = queues === undefined ? undefined : this.nextDueAt(queues);
        if (due !== undefined) dueTimer = setTimeout(retry, Math.max(0, due - Date.now()));
      };
      const retry = (): void => {
        if (this.closed) return finish(undefined);
        const value = take();
        if (value !== undefined) return finish(value);
        armDue();
      };
      const onAbort = (): void => finish(undefined);
      const deadline = setTimeout(() => finish(undefined), timeoutMs);
      const unsubscribe = this.state.onChange(retry);
      signal?.addEventListener('abort', onAbort, { once: true });
      armDue();
    });
  }
}
