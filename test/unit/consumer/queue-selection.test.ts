import { describe, expect, it } from 'vitest';
import { OptionError } from 'prefork';
import {
  MAX_QUEUE_WEIGHT,
  parseQueues,
  QueueSelection,
  type QueueSpec,
} from '../../../dist/consumer/queue-selection.js';

describe('parseQueues', () => {
  it('reads names and weights', () => {
    expect(parseQueues('critical:3,default')).toEqual([
      { name: 'critical', weight: 3 },
      { name: 'default', weight: 1 },
    ]);
  });
  it.each(['', 'a:0', 'a:x', 'a:1:2', 'bad name', 'a,a', 'a:10001', 'a:99999999999999999999', 'a:1e3'])(
    'rejects %j naming the option',
    (spec) => {
      expect(() => parseQueues(spec)).toThrow(/queues/);
    },
  );

  it('takes MAX_QUEUE_WEIGHT', () => {
    expect(parseQueues(`a:${MAX_QUEUE_WEIGHT}`)).toEqual([{ name: 'a', weight: MAX_QUEUE_WEIGHT }]);
    expect(parseQueues([{ name: 'a', weight: MAX_QUEUE_WEIGHT }, 'b'])).toEqual([
      { name: 'a', weight: MAX_QUEUE_WEIGHT },
      { name: 'b', weight: 1 },
    ]);
  });

  it.each([
    [{ name: 'a', weight: 'x' }],
    [{ name: 'a', weight: -1 }],
    [{ name: 'a', weight: 1.5 }],
    [{ name: 'a', weight: 0 }],
    [{ name: 'a', weight: MAX_QUEUE_WEIGHT + 1 }],
    [{ name: 'a', weight: 200_000_000 }],
    [{ name: 'a' }],
    [{ name: 'a', weight: 1, extra: 1 }],
    [{ weight: 1 }],
    [{ name: 5, weight: 1 }],
    [null],
    [5],
    [['a', 1]],
  ])('rejects the spec %j with an OptionError naming it', (item) => {
    let err: unknown;
    try {
      parseQueues([item as QueueSpec]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(OptionError);
    expect((err as OptionError).option).toBe('queues');
    expect((err as OptionError).value).toBe(item);
    expect((err as OptionError).message).toContain('{ name, weight } with an integer weight from 1 to 10000');
  });

  it("reads only a spec's own fields: a weight on its prototype is not one", () => {
    const spec = Object.create({ weight: 2 }) as Record<string, unknown>;
    spec.name = 'a';
    expect(() => parseQueues([spec as unknown as QueueSpec])).toThrow(OptionError);
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

  it("weighted: each order turns up about as often as Sidekiq's draw makes it (weights 5, 3, 2)", () => {
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const s = new QueueSelection(parseQueues('a:5,b:3,c:2'), 'weighted', random);
    const seen = new Map<string, number>();
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const key = s
        .plan(3)
        .map((q) => q.queue)
        .join('');
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    // P(x first, then y) = w(x)/10 × w(y)/(10 - w(x)).
    const expected: Record<string, number> = {
      abc: 0.3,
      acb: 0.2,
      bac: (0.3 * 5) / 7,
      bca: (0.3 * 2) / 7,
      cab: (0.2 * 5) / 8,
      cba: (0.2 * 3) / 8,
    };
    for (const [order, p] of Object.entries(expected)) expect((seen.get(order) ?? 0) / n).toBeCloseTo(p, 1);
  });

  it('weighted: a plan costs the same whatever the weights (no list of weight entries per fetch)', () => {
    let draws = 0;
    const s = new QueueSelection(
      parseQueues([
        { name: 'a', weight: MAX_QUEUE_WEIGHT },
        { name: 'b', weight: 1 },
      ]),
      'weighted',
      () => {
        draws++;
        return 0.5;
      },
    );
    s.plan(10);
    expect(draws).toBe(1);
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
