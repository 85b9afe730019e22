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

/**
 * The largest weight a queue may have: a share 10,000 times another's is
 * already all but strict order, and a larger one is more likely a typo.
 */
export const MAX_QUEUE_WEIGHT = 10_000;

/** A queue a Worker consumes, and its weight. */
export interface QueueSpec {
  /** The queue's name (letters, digits, "_", "-" or "."). */
  name: string;
  /**
   * Its share under the 'weighted' order: an integer from 1 to 10,000
   * (`"critical:3"` gives 3; a name alone, 1).
   */
  weight: number;
}

const WEIGHT_EXPECTED = `an integer weight from 1 to ${MAX_QUEUE_WEIGHT}`;
const SPEC_KEYS = new Set(['name', 'weight']);

/**
 * Parses `-Q critical:3,default` (or an array of names / specs). Weights
 * are integers from 1 to MAX_QUEUE_WEIGHT, default 1. A bad item is an
 * OptionError naming it.
 */
export function parseQueues(value: string | readonly (string | QueueSpec)[]): QueueSpec[] {
  const items: unknown[] =
    typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s.length > 0)
      : Array.isArray(value)
        ? [...(value as unknown[])]
        : [];
  if (items.length === 0) throw new OptionError('queues', value, 'one or more queue names, e.g. "critical:3,default"');
  const seen = new Set<string>();
  return items.map((item) => {
    const spec = queueSpec(item);
    checkQueueName('queues', spec.name, throwOptionError);
    if (seen.has(spec.name)) throw new OptionError('queues', spec.name, 'each queue once');
    seen.add(spec.name);
    return spec;
  });
}

/** One item of `queues`: "name", "name:weight" or `{ name, weight }`, weight checked either way. */
function queueSpec(item: unknown): QueueSpec {
  if (typeof item === 'string') {
    const [name = '', weight, ...rest] = item.split(':');
    const w = weight === undefined ? 1 : parseWeight(weight);
    if (rest.length > 0 || w === undefined)
      throw new OptionError('queues', item, `name or name:weight with ${WEIGHT_EXPECTED}`);
    return { name, weight: w };
  }
  const expected = `a queue name, "name:weight", or { name, weight } with ${WEIGHT_EXPECTED}`;
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new OptionError('queues', item, expected);
  const fields = item as Record<string, unknown>;
  // Read own fields only: a spec is data, and a field it lacks is not looked up on a prototype.
  const name = Object.hasOwn(fields, 'name') ? fields.name : undefined;
  const weight = Object.hasOwn(fields, 'weight') ? fields.weight : undefined;
  if (Object.keys(fields).some((k) => !SPEC_KEYS.has(k)) || typeof name !== 'string' || !isWeight(weight))
    throw new OptionError('queues', item, expected);
  return { name, weight };
}

function parseWeight(text: string): number | undefined {
  const w = /^\d+$/.test(text) ? Number(text) : undefined;
  return isWeight(w) ? w : undefined;
}

function isWeight(w: unknown): w is number {
  return typeof w === 'number' && Number.isInteger(w) && w >= 1 && w <= MAX_QUEUE_WEIGHT;
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

  /**
   * Sidekiq's weighted random order (each queue weight times in a list,
   * shuffled, first occurrences kept) drawn directly: each next queue is
   * picked among those left with a chance proportional to its weight, which
   * is the same distribution. A draw per queue, whatever the weights: the
   * list cost a fetch time and memory in proportion to their sum.
   */
  private weightedOrder(queues: readonly QueueSpec[]): QueueSpec[] {
    const left = [...queues];
    let total = left.reduce((sum, q) => sum + q.weight, 0);
    const order: QueueSpec[] = [];
    while (left.length > 1) {
      let r = this.random() * total;
      let i = 0;
      while (i < left.length - 1 && r >= (left[i] as QueueSpec).weight) r -= (left[i++] as QueueSpec).weight;
      const [picked] = left.splice(i, 1) as [QueueSpec];
      order.push(picked);
      total -= picked.weight;
    }
    order.push(...left);
    return order;
  }
}
