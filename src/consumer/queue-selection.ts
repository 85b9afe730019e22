import { OptionError } from '../errors.js';
import { checkQueueName, throwOptionError } from '../job-option-checks.js';
import type { QueueQuota } from '../broker/types.js';

/**
 * The order a Worker takes its queues in (see QueueSelection): 'round-robin'
 * equal shares, 'weighted' shares by weight in a random order, 'strict' the
 * first queue until it is empty, then the next.
 */
export type QueueOrder = 'round-robin' | 'weighted' | 'strict';
export const QUEUE_ORDERS: readonly QueueOrder[] = ['round-robin', 'weighted', 'strict'];

/** A queue a Worker consumes, and its weight. */
export interface QueueSpec {
  /** The queue's name (letters, digits, "_", "-" or "."). */
  name: string;
  /** Its share under the 'weighted' order: a positive integer (`"critical:3"` gives 3; a name alone, 1). */
  weight: number;
}

/** Parses `-Q critical:3,default` (or an array of names / specs). Weights are positive integers, default 1. */
export function parseQueues(value: string | readonly (string | QueueSpec)[]): QueueSpec[] {
  const items =
    typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s.length > 0)
      : [...value];
  if (items.length === 0) throw new OptionError('queues', value, 'one or more queue names, e.g. "critical:3,default"');
  const seen = new Set<string>();
  return items.map((item) => {
    let spec: QueueSpec;
    if (typeof item === 'string') {
      const [name = '', weight, ...rest] = item.split(':');
      const w = weight === undefined ? 1 : Number(weight);
      if (rest.length > 0 || !Number.isInteger(w) || w < 1)
        throw new OptionError('queues', item, 'name or name:weight with an integer weight >= 1');
      spec = { name, weight: w };
    } else {
      spec = item;
    }
    checkQueueName('queues', spec.name, throwOptionError);
    if (seen.has(spec.name)) throw new OptionError('queues', spec.name, 'each queue once');
    seen.add(spec.name);
    return spec;
  });
}

/**
 * Which queues a fetch takes from, and how many from each (the three orders
 * of Kombu, Sidekiq and strict priority, generalised to batches; with a batch
 * of 1 each is exactly the original):
 * - strict: the first queue gets the whole batch; leftovers go down the list.
 * - weighted (Sidekiq): a random order drawn by weight each fetch, quotas in proportion.
 * - round-robin (Kombu): equal quotas; every queue that delivered moves to the end.
 */
export class QueueSelection {
  private cycle: QueueSpec[];

  constructor(
    readonly queues: readonly QueueSpec[],
    readonly order: QueueOrder,
    private readonly random: () => number = Math.random,
  ) {
    this.cycle = [...queues];
  }

  /** Queues not to fetch from now (paused, or the node is quiet): plan() and names leave them out. */
  skip: (queue: string) => boolean = () => false;

  /** The queues fetched from now (none paused). */
  get names(): string[] {
    return this.active(this.queues).map((q) => q.name);
  }

  /** Quotas over the queues not paused; empty when every queue is. */
  plan(count: number): QueueQuota[] {
    const queues = this.active(this.queues);
    if (queues.length === 0) return [];
    if (this.order === 'strict') return queues.map((q, i) => ({ queue: q.name, quota: i === 0 ? count : 0 }));
    const ordered = this.order === 'weighted' ? this.weightedOrder(queues) : this.active(this.cycle);
    const total = ordered.reduce((sum, q) => sum + q.weight, 0);
    const weights = this.order === 'weighted' ? ordered.map((q) => q.weight) : ordered.map(() => 1);
    const sum = this.order === 'weighted' ? total : ordered.length;
    const quotas = weights.map((w) => Math.floor((count * w) / sum));
    // The remainder goes to the queues first in this fetch's order, one each.
    let rest = count - quotas.reduce((a, b) => a + b, 0);
    for (let i = 0; rest > 0; i = (i + 1) % quotas.length, rest--) quotas[i] = (quotas[i] as number) + 1;
    return ordered.map((q, i) => ({ queue: q.name, quota: quotas[i] as number }));
  }

  /** Round-robin only: the queues that delivered go to the end of the cycle, in the order they delivered. */
  delivered(queues: Iterable<string>): void {
    if (this.order !== 'round-robin') return;
    const used = new Set(queues);
    if (used.size === 0) return;
    this.cycle = [...this.cycle.filter((q) => !used.has(q.name)), ...this.cycle.filter((q) => used.has(q.name))];
  }

  private active(queues: readonly QueueSpec[]): readonly QueueSpec[] {
    return queues.some((q) => this.skip(q.name)) ? queues.filter((q) => !this.skip(q.name)) : queues;
  }

  /** Sidekiq's weighted random order: each queue appears weight times, shuffle, keep first occurrences. */
  private weightedOrder(queues: readonly QueueSpec[]): QueueSpec[] {
    const expanded: QueueSpec[] = [];
    for (const q of queues) for (let i = 0; i < q.weight; i++) expanded.push(q);
    for (let i = expanded.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [expanded[i], expanded[j]] = [expanded[j] as QueueSpec, expanded[i] as QueueSpec];
    }
    return [...new Set(expanded)];
  }
}
