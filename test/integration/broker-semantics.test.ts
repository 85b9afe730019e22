/**
 * The broker contract (src/broker/types.ts) over both implementations: the
 * embedded memory:// broker must behave as the Redis one does, so the demo
 * and tests on memory:// tell the truth about production.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createBroker, type Broker, type NewJob } from 'prefork/broker';
import { MIN_LEASE_MS } from '../../dist/broker/broker-options.js';
import { brokerFor, silent, uniqueName } from '../helpers/worker.js';

const open: Broker[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});

function job(id: string, queue = 'q', extra: Partial<NewJob> = {}): NewJob {
  return {
    id,
    task: 't',
    queue,
    payload: new Uint8Array([0x90]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: Date.now(),
    ...extra,
  };
}

async function node(b: Broker, id: string, queues: string[] = ['q']): Promise<string> {
  await b.register({ id, name: id, host: 'h', pid: 1, queues, concurrency: '1', startedAt: Date.now() });
  return id;
}

describe.each(['memory', 'redis'] as const)('broker semantics over %s', (kind) => {
  async function broker(leaseMs?: number): Promise<Broker> {
    const url = brokerFor(kind, inject('redisUrl'));
    const b = createBroker(url, { namespace: uniqueName('ns'), logger: silent, leaseMs });
    open.push(b);
    await b.connect();
    return b;
  }

  it('fetch reserves up to count; an ack leaves nothing waiting or reserved', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('a'), job('b'), job('c')]);
    const r = await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 2 }], count: 2, settle: [] });
    expect(r.deliveries.map((d) => d.job.id)).toEqual(['a', 'b']);
    expect(await b.counts(['q'])).toEqual([{ queue: 'q', waiting: 1, reserved: 2, delayed: 0, dead: 0 }]);
    await b.settle(r.deliveries.map((delivery) => ({ kind: 'ack' as const, delivery })));
    expect(await b.counts(['q'])).toEqual([{ queue: 'q', waiting: 1, reserved: 0, delayed: 0, dead: 0 }]);
  });

  it('quotas first, then leftovers in plan order', async () => {
    const b = await broker();
    const me = await node(b, 'n1', ['x', 'y']);
    await b.enqueue([job('x1', 'x'), job('x2', 'x'), job('x3', 'x'), job('y1', 'y')]);
    const r = await b.fetch({
      nodeId: me,
      plan: [
        { queue: 'y', quota: 2 },
        { queue: 'x', quota: 1 },
      ],
      count: 4,
      settle: [],
    });
    expect(r.deliveries.map((d) => d.job.id)).toEqual(['y1', 'x1', 'x2', 'x3']);
  });

  it('given-back jobs are served first, with redeliveries + 1', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('a'), job('b')]);
    const [first] = (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })).deliveries;
    await b.settle([{ kind: 'giveBack', delivery: first! }]);
    const again = await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 2 }], count: 2, settle: [] });
    expect(again.deliveries.map((d) => [d.job.id, d.job.redeliveries])).toEqual([
      ['a', 1],
      ['b', 0],
    ]);
  });

  it('a job given back to spread it (spread) is served first with its redeliveries unchanged', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('a', 'q', { redeliveries: 2 }), job('b')]);
    const [first] = (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })).deliveries;
    await b.settle([{ kind: 'giveBack', delivery: first!, spread: true }]);
    const again = await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 2 }], count: 2, settle: [] });
    expect(again.deliveries.map((d) => [d.job.id, d.job.redeliveries])).toEqual([
      ['a', 2],
      ['b', 0],
    ]);
  });

  it('retry goes to the delayed set with attempt + 1 and comes back when due', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('a')]);
    const [d] = (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })).deliveries;
    await b.settle([{ kind: 'retry', delivery: d!, delay: 150 }]);
    expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 0, delayed: 1 });
    const w = await b.waitForWork(me, ['q'], 5_000, new AbortController().signal, 1);
    const got =
      w.deliveries.length > 0
        ? w.deliveries
        : (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })).deliveries;
    expect(got.map((x) => [x.job.id, x.job.attempt])).toEqual([['a', 1]]);
  });

  it('dead letters: listed newest first, retried back to the queue with attempt 0, purged', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('a'), job('b'), job('c')]);
    const r = await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 3 }], count: 3, settle: [] });
    await b.settle(
      r.deliveries.map((delivery) => ({ kind: 'dead' as const, delivery, reason: `bad ${delivery.job.id}` })),
    );
    const dead = await b.listDead('q', 10);
    expect(dead.map((d) => [d.job.id, d.reason])).toEqual([
      ['c', 'bad c'],
      ['b', 'bad b'],
      ['a', 'bad a'],
    ]);
    expect(await b.retryDead('q', ['b'])).toBe(1);
    expect(
      (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 5 }], count: 5, settle: [] })).deliveries.map((d) => [
        d.job.id,
        d.job.attempt,
      ]),
    ).toEqual([['b', 0]]);
    expect(await b.purgeDead('q')).toBe(2);
    expect((await b.counts(['q']))[0]!.dead).toBe(0);
  });

  it('purge drops waiting and delayed jobs; knownQueues lists every queue used', async () => {
    const b = await broker();
    await b.enqueue([job('a', 'p1'), job('b', 'p1', { delay: 60_000 }), job('c', 'p2')]);
    expect(await b.purge('p1')).toBe(2);
    expect((await b.counts(['p1']))[0]).toMatchObject({ waiting: 0, delayed: 0 });
    expect(await b.knownQueues()).toEqual(expect.arrayContaining(['p1', 'p2']));
  });

  it('a live node keeps its jobs; once its lease expires another node recovers them, served first, redeliveries + 1', async () => {
    const b = await broker(MIN_LEASE_MS);
    const a = await node(b, 'node-a');
    const other = await node(b, 'node-b');
    await b.enqueue([job('a'), job('b'), job('c')]);
    const held = await b.fetch({ nodeId: a, plan: [{ queue: 'q', quota: 2 }], count: 2, settle: [] });
    expect(await b.recover(a, other, 5)).toBe(0); // still alive
    await new Promise((resolve) => setTimeout(resolve, MIN_LEASE_MS + 100));
    const beat = await b.heartbeat(other, ['q']);
    // node-b did not beat either: its lease ran out too, but no node took its jobs, so its beat renews it (fenced means taken).
    expect(beat.fenced).toBe(false);
    expect(beat.lapsedMs).toBeGreaterThan(0);
    await node(b, 'node-c');
    const expired = (await b.heartbeat('node-c', ['q'])).expired;
    expect(expired.length).toBeGreaterThan(0);
    for (const id of expired) expect([a, other]).toContain(id);
    expect(await b.recover(a, 'node-c', 5)).toBe(2);
    const r = await b.fetch({ nodeId: 'node-c', plan: [{ queue: 'q', quota: 3 }], count: 3, settle: [] });
    expect(r.deliveries.map((d) => [d.job.id, d.job.redeliveries])).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 0],
    ]);
    // node-a's late settle changes nothing: the recovered copies are still reserved by node-c.
    await b.settle(held.deliveries.map((delivery) => ({ kind: 'ack' as const, delivery })));
    expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 3 });
    // A fenced node fetches nothing.
    expect(await b.fetch({ nodeId: a, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })).toMatchObject({
      fenced: true,
      deliveries: [],
    });
  });

  it('a job redelivered more than maxRedeliveries times is a poison job: dead set', async () => {
    const b = await broker(MIN_LEASE_MS);
    await b.enqueue([job('p', 'q', { redeliveries: 2 })]);
    const a = await node(b, 'node-a');
    await b.fetch({ nodeId: a, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
    await new Promise((resolve) => setTimeout(resolve, MIN_LEASE_MS + 100));
    await node(b, 'node-b');
    expect(await b.recover(a, 'node-b', 2)).toBe(1);
    const [dead] = await b.listDead('q', 1);
    expect(dead?.job.id).toBe('p');
    expect(dead?.reason).toMatch(/deliver/i);
  });

  it('a poison job with its own id stays known while its FAILURE is kept: enqueued again, it is not added', async () => {
    const b = await broker(MIN_LEASE_MS);
    await b.enqueue([job('own', 'q', { ownId: true })]);
    const a = await node(b, 'node-a');
    await b.fetch({ nodeId: a, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
    await new Promise((resolve) => setTimeout(resolve, MIN_LEASE_MS + 100));
    await node(b, 'node-b');
    expect(await b.recover(a, 'node-b', 0)).toBe(1);
    expect(await b.getResult('own')).toMatchObject({ state: 'FAILURE', error: { name: 'WorkerLostError' } });
    // As when a node settles a job that ended: the id is known while its result is kept.
    expect(await b.enqueue([job('own', 'q', { ownId: true })])).toEqual(['own']);
    expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, dead: 1 });
  });

  it('waitForWork wakes on a new job, honours its abort signal, and reserves at most count', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    const controller = new AbortController();
    const aborted = b.waitForWork(me, ['q'], 5_000, controller.signal, 1);
    controller.abort();
    expect((await aborted).deliveries).toEqual([]);
    const waiting = b.waitForWork(me, ['q'], 5_000, new AbortController().signal, 2);
    await b.enqueue([job('a'), job('b'), job('c')]);
    const got = (await waiting).deliveries;
    expect(got.length).toBeGreaterThanOrEqual(1);
    expect(got.length).toBeLessThanOrEqual(2);
    expect((await b.counts(['q']))[0]).toMatchObject({ reserved: got.length, waiting: 3 - got.length });
  });

  it('results: stored, announced to the waiting client for final states only, and absent when not written', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('r1', 'q', { replyTo: 'client-1' }), job('r2', 'q', { replyTo: 'client-1' })]);
    const [d1, d2] = (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 2 }], count: 2, settle: [] })).deliveries;
    const base = { task: 't', queue: 'q', retries: 0 };
    await b.settle([{ kind: 'progress', delivery: d1!, result: { ...base, id: 'r1', state: 'STARTED' } }]);
    expect((await b.getResult('r1'))?.state).toBe('STARTED');
    const waiting = b.waitForResults('client-1', 5_000);
    await b.settle([
      { kind: 'ack', delivery: d1!, result: { ...base, id: 'r1', state: 'SUCCESS', value: { ok: [1, 2] } } },
      { kind: 'ack', delivery: d2! },
    ]);
    expect((await waiting).records.map((r) => [r.id, r.state, r.value])).toEqual([['r1', 'SUCCESS', { ok: [1, 2] }]]);
    expect(await b.getResult('r2')).toBeUndefined();
  });
});
