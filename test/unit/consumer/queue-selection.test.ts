import { describe, expect, it } from 'vitest';
import { parseQueues, QueueSelection } from '../../../dist/consumer/queue-selection.js';

describe('parseQueues', () => {
  it('reads names and weights', () => {
    expect(parseQueues('critical:3,default')).toEqual([
      { name: 'critical', weight: 3 },
      { name: 'default', weight: 1 },
    ]);
  });
  it.each(['', 'a:0', 'a:x', 'a:1:2', 'bad name', 'a,a'])('rejects %j naming the option', (spec) => {
    expect(() => parseQueues(spec)).toThrow(/queues/);
  });
});

describe('QueueSelection', () => {
  it('strict: the first queue gets the whole batch, the rest only leftovers', () => {
    const s = new QueueSelection(parseQueues('high,low'), 'strict');
    expect(s.plan(10)).toEqual([
      { queue: 'high', quota: 10 },
      { queue: 'low', quota: 0 },
    ]);
  });

  it('round-robin: equal quotas, remainder to the first in the cycle', () => {
    const s = new QueueSelection(parseQueues('a,b,c'), 'round-robin');
    expect(s.plan(10)).toEqual([
      { queue: 'a', quota: 4 },
      { queue: 'b', quota: 3 },
      { queue: 'c', quota: 3 },
    ]);
  });

  it('round-robin: a queue that delivered moves to the end (Kombu cycle)', () => {
    const s = new QueueSelection(parseQueues('a,b,c'), 'round-robin');
    s.delivered(['a']);
    expect(s.plan(1).map((q) => q.queue)).toEqual(['b', 'c', 'a']);
    s.delivered(['b']);
    expect(s.plan(1).map((q) => q.queue)).toEqual(['c', 'a', 'b']);
    expect(s.plan(1)[0]).toEqual({ queue: 'c', quota: 1 });
  });

  it('strict and weighted do not rotate', () => {
    const s = new QueueSelection(parseQueues('a,b'), 'strict');
    s.delivered(['a']);
    expect(s.plan(1)[0]?.queue).toBe('a');
  });

  it('weighted: quotas in proportion to weights, order drawn by weight', () => {
    // random() = 0 keeps the Fisher–Yates shuffle deterministic.
    const s = new QueueSelection(parseQueues('critical:3,default:1'), 'weighted', () => 0);
    const plan = s.plan(8);
    expect(plan.reduce((n, q) => n + q.quota, 0)).toBe(8);
    expect(Object.fromEntries(plan.map((q) => [q.queue, q.quota]))).toEqual({ critical: 6, default: 2 });
  });

  it('weighted: with batches of one, the heavier queue comes first about weight/total of the time', () => {
    let seed = 42;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const s = new QueueSelection(parseQueues('critical:3,default:1'), 'weighted', random);
    let first = 0;
    for (let i = 0; i < 4000; i++) if (s.plan(1).find((q) => q.quota === 1)?.queue === 'critical') first++;
    expect(first / 4000).toBeGreaterThan(0.65);
    expect(first / 4000).toBeLessThan(0.85);
  });

  it('skips paused queues in every order, and plans nothing when all are paused', () => {
    const paused = new Set(['a']);
    for (const order of ['strict', 'round-robin', 'weighted'] as const) {
      const s = new QueueSelection(parseQueues('a:2,b,c'), order, () => 0);
      s.skip = (q) => paused.has(q);
      expect(s.names).toEqual(['b', 'c']);
      const plan = s.plan(4);
      expect(plan.map((q) => q.queue).sort()).toEqual(['b', 'c']);
      expect(plan.reduce((n, q) => n + q.quota, 0)).toBe(4);
      if (order === 'strict') expect(plan[0]).toEqual({ queue: 'b', quota: 4 });
    }
    const s = new QueueSelection(parseQueues('a,b'), 'round-robin');
    s.skip = () => true;
    expect(s.plan(4)).toEqual([]);
    expect(s.names).toEqual([]);
    s.skip = () => false;
    expect(s.plan(2)).toEqual([
      { queue: 'a', quota: 1 },
      { queue: 'b', quota: 1 },
    ]);
  });

  it('every plan hands out exactly the batch', () => {
    for (const order of ['round-robin', 'weighted', 'strict'] as const) {
      const s = new QueueSelection(parseQueues('a:2,b:5,c'), order);
      for (const n of [1, 2, 7, 64]) expect(s.plan(n).reduce((sum, q) => sum + q.quota, 0)).toBe(n);
    }
  });
});
