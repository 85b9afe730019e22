/**
 * Broker.locate and removeWaiting (the job index), over both brokers: a job
 * is found where it is at each step of its life (waiting, reserved by a
 * node, delayed, retried, given back, recovered), and not once it ended;
 * a waiting or delayed job can be taken out and is then never fetched.
 */
import { describe, expect, it } from 'vitest';
import type { Broker, Delivery, NewJob } from '../../dist/broker/types.js';
import { MIN_LEASE_MS } from '../../dist/broker/broker-options.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';

function job(id: string, queue = 'q', extra: Partial<NewJob> = {}): NewJob {
  return {
    id,
    task: 'work',
    queue,
    payload: new Uint8Array([0x91, 0x01]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: Date.now(),
    ...extra,
  };
}

describe.each(['memory', 'redis'] as const)('job index over %s', (kind) => {
  const { broker, node } = eachBrokerScope(kind, 'locate');

  async function fetchAll(b: Broker, nodeId: string, queue: string, count: number): Promise<Delivery[]> {
    return (await b.fetch({ nodeId, plan: [{ queue, quota: count }], count, settle: [] })).deliveries;
  }

  it('finds a job waiting, then reserved by its node, and not once acked', async () => {
    const b = await broker();
    const n1 = await node(b, 'n1', ['q']);
    await b.enqueue([job('a'), job('b')]);
    expect(await b.locate('a')).toMatchObject({ id: 'a', queue: 'q', state: 'waiting', task: 'work', attempt: 0 });
    const [first] = await fetchAll(b, n1, 'q', 1);
    expect(first?.job.id).toBe('a');
    expect(await b.locate('a')).toMatchObject({ state: 'reserved', nodeId: n1 });
    expect((await b.locate('a'))?.reservedAt).toBeGreaterThan(0);
    expect(await b.locate('b')).toMatchObject({ state: 'waiting' });
    await b.settle([{ kind: 'ack', delivery: first as Delivery }]);
    expect(await b.locate('a')).toBeUndefined();
    expect(await b.locate('never-enqueued')).toBeUndefined();
  });

  it('finds jobs enqueued in bulk, each in its own queue', async () => {
    const b = await broker();
    const jobs = Array.from({ length: 30 }, (_, i) => job(`j${i}`, i % 2 === 0 ? 'even' : 'odd'));
    await b.enqueue(jobs);
    for (const j of jobs) expect(await b.locate(j.id)).toMatchObject({ state: 'waiting', queue: j.queue });
  });

  it('finds a delayed job with its due time, then waiting once promoted', async () => {
    const b = await broker();
    const n1 = await node(b, 'n1', ['q']);
    const before = Date.now();
    await b.enqueue([job('later', 'q', { delay: 60_000 }), job('soon', 'q', { delay: 150 })]);
    const later = await b.locate('later');
    expect(later).toMatchObject({ state: 'delayed', queue: 'q', attempt: 0 });
    expect(later?.dueAt).toBeGreaterThanOrEqual(before + 59_000);
    expect(later?.dueAt).toBeLessThan(before + 120_000);
    await expect
      .poll(async () => (await fetchAll(b, n1, 'q', 1)).map((d) => d.job.id), { timeout: 10_000 })
      .toEqual(['soon']);
    expect(await b.locate('soon')).toMatchObject({ state: 'reserved', nodeId: n1 });
  });

  it('follows a retry to the delayed set, a give-back to the queue, and drops a dead job', async () => {
    const b = await broker();
    const n1 = await node(b, 'n1', ['q']);
    await b.enqueue([job('r'), job('g'), job('d')]);
    const [r, g, d] = await fetchAll(b, n1, 'q', 3);
    await b.settle([
      { kind: 'retry', delivery: r as Delivery, delay: 60_000 },
      { kind: 'giveBack', delivery: g as Delivery },
      { kind: 'dead', delivery: d as Delivery, reason: 'test' },
    ]);
    expect(await b.locate('r')).toMatchObject({ state: 'delayed', attempt: 1 });
    expect(await b.locate('g')).toMatchObject({ state: 'waiting', redeliveries: 1 });
    expect(await b.locate('d')).toBeUndefined();
    // A second settle of the old receipt (a late ack) leaves the job where it is now.
    await b.settle([{ kind: 'ack', delivery: g as Delivery }]);
    expect(await b.locate('g')).toMatchObject({ state: 'waiting', redeliveries: 1 });
  });

  it("follows a dead node's jobs back to the queue", async () => {
    const b = await broker({ leaseMs: MIN_LEASE_MS });
    const dead = await node(b, 'dead', ['q']);
    const alive = await node(b, 'alive', ['q']);
    await b.enqueue([job('x')]);
    await fetchAll(b, dead, 'q', 1);
    expect(await b.locate('x')).toMatchObject({ state: 'reserved', nodeId: dead });
    await expect.poll(async () => (await b.heartbeat(alive, ['q'])).expired, { timeout: 10_000 }).toContain(dead);
    await b.recover(dead, alive, 5);
    expect(await b.locate('x')).toMatchObject({ state: 'waiting', redeliveries: 1 });
  });

  it('purge drops the jobs it removes from the index', async () => {
    const b = await broker();
    await b.enqueue([job('p1'), job('p2', 'q', { delay: 60_000 })]);
    expect(await b.purge('q')).toBe(2);
    expect(await b.locate('p1')).toBeUndefined();
    expect(await b.locate('p2')).toBeUndefined();
  });

  it('removeWaiting takes a waiting or delayed job out (never fetched), not a reserved one', async () => {
    const b = await broker();
    const n1 = await node(b, 'n1', ['q']);
    await b.enqueue([job('held'), job('w1'), job('w2'), job('dl', 'q', { delay: 60_000 })]);
    const [held] = await fetchAll(b, n1, 'q', 1);
    expect(held?.job.id).toBe('held');
    expect(await b.removeWaiting('held')).toBeUndefined();
    expect(await b.locate('held')).toMatchObject({ state: 'reserved' });
    expect(await b.removeWaiting('w1')).toMatchObject({ id: 'w1', state: 'waiting', queue: 'q' });
    expect(await b.removeWaiting('dl')).toMatchObject({ id: 'dl', state: 'delayed' });
    expect(await b.removeWaiting('w1')).toBeUndefined();
    expect(await b.removeWaiting('unknown')).toBeUndefined();
    expect(await b.locate('w1')).toBeUndefined();
    expect(await b.locate('dl')).toBeUndefined();
    expect((await fetchAll(b, n1, 'q', 10)).map((d) => d.job.id)).toEqual(['w2']);
    expect(await b.counts(['q'])).toEqual([{ queue: 'q', waiting: 0, reserved: 2, delayed: 0, dead: 0 }]);
  });
});
