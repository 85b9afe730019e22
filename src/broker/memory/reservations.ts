import type { Delivery, JobRecord, NodeInfo } from '../types.js';
import type { MemoryQueue } from './memory-queue.js';
import { InvalidStateError } from '../../errors.js';

/** A member of the cluster: its lease and the receipts it holds. */
export interface MemoryNode {
  info: NodeInfo;
  leaseUntil: number;
  readonly reserved: Set<string>;
}

/** A delivery held by a node until it is settled. */
export interface Reservation {
  readonly nodeId: string;
  readonly delivery: Delivery;
  /** Epoch ms when it was reserved. */
  readonly reservedAt: number;
}

/**
 * Receipts are unique in the process (not only per broker name): a delivery
 * recovered and delivered again gets a new receipt, so a fenced node's late
 * settle of the old one matches nothing, whatever broker it goes to.
 */
let receiptSeq = 0;

/**
 * Nodes, their leases, and the deliveries each one holds (the memory twin of
 * the consumer group's pending lists): a job reserved by a node is in exactly
 * one place, here, until it is settled or its node is recovered.
 */
export class Reservations {
  readonly nodes = new Map<string, MemoryNode>();
  private readonly held = new Map<string, Reservation>();

  constructor(private readonly queueOf: (name: string) => MemoryQueue) {}

  register(info: NodeInfo, leaseMs: number, now: number): void {
    const previous = this.nodes.get(info.id);
    this.nodes.set(info.id, {
      info: structuredClone(info),
      leaseUntil: now + leaseMs,
      reserved: previous?.reserved ?? new Set(),
    });
  }

  /** A lease is held until its deadline (exclusive). */
  holdsLease(nodeId: string, now: number): boolean {
    const node = this.nodes.get(nodeId);
    return node !== undefined && node.leaseUntil > now;
  }

  /** True while `nodeId` is a member: not recovered nor gone, though its lease may have run out (nobody took its jobs yet). */
  isMember(nodeId: string): boolean {
    return this.nodes.has(nodeId);
  }

  /**
   * Renews the lease of a member, also one that ran out (no recovery took
   * its jobs: removeNode() would have removed it). Returns how long it had
   * run out (ms, 0 if not), or undefined when the node is gone (fenced).
   */
  renew(nodeId: string, leaseMs: number, now: number): number | undefined {
    const node = this.nodes.get(nodeId);
    if (node === undefined) return undefined;
    const lapsed = Math.max(0, now - node.leaseUntil);
    node.leaseUntil = now + leaseMs;
    return lapsed;
  }

  /** Nodes other than `except` whose lease has expired. */
  expired(except: string, now: number): string[] {
    const out: string[] = [];
    for (const [id, node] of this.nodes) if (id !== except && node.leaseUntil <= now) out.push(id);
    return out;
  }

  /** The earliest lease deadline of a live node other than `except`. */
  nextExpiry(except: string, now: number): number | undefined {
    let next: number | undefined;
    for (const [id, node] of this.nodes) {
      if (id !== except && node.leaseUntil > now && (next === undefined || node.leaseUntil < next))
        next = node.leaseUntil;
    }
    return next;
  }

  /** Reserves `job` (already taken from its queue) for `nodeId`; the delivery carries a copy. */
  reserve(nodeId: string, queue: string, job: JobRecord): Delivery {
    const node = this.nodes.get(nodeId);
    if (node === undefined) throw new InvalidStateError(`memory broker: node ${nodeId} is not registered`);
    const delivery: Delivery = { receipt: `m${++receiptSeq}`, queue, job: structuredClone(job) };
    this.held.set(delivery.receipt, {
      nodeId,
      delivery: { receipt: delivery.receipt, queue, job },
      reservedAt: Date.now(),
    });
    node.reserved.add(delivery.receipt);
    this.queueOf(queue).reserved++;
    return delivery;
  }

  /** The ids of the jobs nodes hold. */
  *jobIds(): IterableIterator<string> {
    for (const r of this.held.values()) yield r.delivery.job.id;
  }

  /** The reservation of the job `id`, if a node holds it (a scan: not for the hot path). */
  findJob(id: string): Reservation | undefined {
    for (const r of this.held.values()) if (r.delivery.job.id === id) return r;
    return undefined;
  }

  /** Ends a reservation and returns it; undefined when it is no longer held (settled already, or recovered). */
  release(receipt: string): Reservation | undefined {
    const r = this.held.get(receipt);
    if (r === undefined) return undefined;
    this.held.delete(receipt);
    this.nodes.get(r.nodeId)?.reserved.delete(receipt);
    this.queueOf(r.delivery.queue).reserved--;
    return r;
  }

  /**
   * Moves what `from` holds to `to` (registered) and removes `from`: the
   * memory twin of adoptEntries-n.lua. Returns how many moved; -1 (nothing
   * changes) while `from` holds a live lease.
   */
  adopt(from: string, to: string, now: number): number {
    const old = this.nodes.get(from);
    const node = this.nodes.get(to);
    if (node === undefined || from === to)
      throw new InvalidStateError(`memory broker: cannot adopt ${from} into ${to}`);
    if (old === undefined) return 0;
    if (old.leaseUntil > now) return -1;
    this.nodes.delete(from);
    for (const receipt of old.reserved) {
      const r = this.held.get(receipt);
      if (r === undefined) continue;
      this.held.set(receipt, { ...r, nodeId: to });
      node.reserved.add(receipt);
    }
    return old.reserved.size;
  }

  /** Removes a node and ends all its reservations, returning them in the order they were made. */
  removeNode(nodeId: string): Reservation[] {
    const node = this.nodes.get(nodeId);
    if (node === undefined) return [];
    this.nodes.delete(nodeId);
    const out: Reservation[] = [];
    for (const receipt of [...node.reserved]) {
      const r = this.release(receipt);
      if (r !== undefined) out.push(r);
    }
    return out;
  }
}
