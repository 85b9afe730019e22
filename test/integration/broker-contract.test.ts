/**
 * The Broker contract (src/broker/types.ts), one behaviour suite run over
 * both implementations: the embedded memory:// broker and the real Redis one.
 * It is the arbiter between them: a case that passes on one and fails on the
 * other is a bug in the one that fails. Behaviour only, never speed: waits
 * are bounded by generous timeouts, and a wait that runs out fails by what it
 * returned, not by how long it took.
 */
import { describe, expect, it } from 'vitest';
import { chain, task } from 'prefork';
import type { Broker, Delivery, NewJob, ResultRecord, Settlement } from '../../dist/broker/types.js';
import { MIN_LEASE_MS } from '../../dist/broker/broker-options.js';
import { compileWorkflow } from '../../dist/workflow/compile.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';

/** Long enough that a wait only ends this way when the broker failed to wake it. */
const LONG = 15_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const never = (): AbortSignal => new AbortController().signal;
const ids = (items: readonly { job: { id: string } }[]): string[] => items.map((d) => d.job.id);

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

function result(d: Delivery, state: ResultRecord['state'], extra: Partial<ResultRecord> = {}): ResultRecord {
  return { id: d.job.id, task: d.job.task, queue: d.queue, state, retries: d.job.attempt, ...extra };
}

const ack = (delivery: Delivery, res?: ResultRecord): Settlement =>
  res === undefined ? { kind: 'ack', delivery } : { kind: 'ack', delivery, result: res };

describe.each(['memory', 'redis'] as const)('Broker contract over %s', (kind) => {
  /** One namespace (and, for memory, one broker name) per test; every handle of the test shares it. */
  const { broker, node } = eachBrokerScope(kind, 'contract');

  async function fetchAll(
    b: Broker,
    nodeId: string,
    queues: string[],
    count: number,
    settle: Settlement[] = [],
  ): Promise<Delivery[]> {
    return (await b.fetch({ nodeId, plan: queues.map((queue) => ({ queue, quota: count })), count, settle }))
      .deliveries;
  }

  /**
   * Takes `n` jobs as the Consumer does: fetch; when short, wait for work no
   * longer than the next due time the broker reported (a wait needs to wake
   * by itself only for work that arrives while it blocks), then fetch again.
   * Returns the jobs in delivery order, with when each arrived.
   */
  async function collect(
    b: Broker,
    nodeId: string,
    queues: string[],
    n: number,
  ): Promise<{ d: Delivery; at: number }[]> {
    const got: { d: Delivery; at: number }[] = [];
    const add = (ds: readonly Delivery[]): void => {
      const at = Date.now();
      for (const d of ds) got.push({ d, at });
    };
    for (let round = 0; round < 2 * n + 4 && got.length < n; round++) {
      const r = await b.fetch({
        nodeId,
        plan: queues.map((queue) => ({ queue, quota: n - got.length })),
        count: n - got.length,
        settle: [],
      });
      add(r.deliveries);
      if (got.length >= n) break;
      const timeout = r.nextDueAt === undefined ? LONG : Math.min(LONG, Math.max(1, r.nextDueAt - Date.now()));
      add((await b.waitForWork(nodeId, queues, timeout, never(), n - got.length)).deliveries);
    }
    return got;
  }

  describe('enqueue, fetch, ack', () => {
    it.each(['default:delayed', 'default:dead', 'a b', '{x}', ''])(
      'refuses the queue name %j with an OptionError naming it, and enqueues nothing of the batch',
      async (name) => {
        const b = await broker();
        const err = await b.enqueue([job('ok', 'default'), job('bad', name)]).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: 'PREFORK_BAD_OPTION', option: 'queue', value: name });
        expect(await b.counts(['default'])).toEqual([
          { queue: 'default', waiting: 0, reserved: 0, delayed: 0, dead: 0 },
        ]);
        expect(await b.knownQueues()).toEqual([]);
      },
    );

    it('an acked job leaves nothing waiting or reserved', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('a')]);
      expect(await b.counts(['q'])).toEqual([{ queue: 'q', waiting: 1, reserved: 0, delayed: 0, dead: 0 }]);
      const got = await fetchAll(b, me, ['q'], 10);
      expect(ids(got)).toEqual(['a']);
      expect(await b.counts(['q'])).toEqual([{ queue: 'q', waiting: 0, reserved: 1, delayed: 0, dead: 0 }]);
      await b.settle(got.map((d) => ack(d)));
      expect(await b.counts(['q'])).toEqual([{ queue: 'q', waiting: 0, reserved: 0, delayed: 0, dead: 0 }]);
    });

    it('a fetch settles its settlements first, in the same call', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('a'), job('b')]);
      const first = await fetchAll(b, me, ['q'], 1);
      const second = await fetchAll(
        b,
        me,
        ['q'],
        1,
        first.map((d) => ack(d)),
      );
      expect([ids(first), ids(second)]).toEqual([['a'], ['b']]);
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 1 });
    });

    it('fetch reserves at most count, FIFO; count 0 reserves nothing', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue(['a', 'b', 'c', 'd', 'e'].map((id) => job(id)));
      expect(await fetchAll(b, me, ['q'], 0)).toEqual([]);
      expect(ids(await fetchAll(b, me, ['q'], 3))).toEqual(['a', 'b', 'c']);
      expect(ids(await fetchAll(b, me, ['q'], 3))).toEqual(['d', 'e']);
      expect(await fetchAll(b, me, ['q'], 3)).toEqual([]);
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 5 });
    });

    it('the job comes back as it was enqueued, payload bytes untouched; a producer mutating its object later changes nothing', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      const payload = new Uint8Array([0x92, 0xa1, 0x78, 0xcc, 0xff]);
      const input = job('a', 'q', {
        payload,
        options: { retries: 3, backoff: { type: 'fixed', delay: 10 }, timeLimit: 500 },
        replyTo: 'client-x',
        enqueuedAt: 1_700_000_000_000,
      });
      await b.enqueue([input]);
      payload[0] = 0;
      input.options.retries = 99;
      input.task = 'changed';
      const [d] = await fetchAll(b, me, ['q'], 1);
      expect(d?.queue).toBe('q');
      expect(d?.malformed).toBeUndefined();
      expect(Array.from(d!.job.payload)).toEqual([0x92, 0xa1, 0x78, 0xcc, 0xff]);
      expect(d!.job).toMatchObject({
        id: 'a',
        task: 'work',
        queue: 'q',
        attempt: 0,
        redeliveries: 0,
        replyTo: 'client-x',
        enqueuedAt: 1_700_000_000_000,
      });
      expect(d!.job.options).toMatchObject({ retries: 3, backoff: { type: 'fixed', delay: 10 }, timeLimit: 500 });
    });

    it('every delivery has its own receipt', async () => {
      const b = await broker();
      const me = await node(b, 'n1', ['x', 'y']);
      await b.enqueue([job('a', 'x'), job('b', 'x'), job('c', 'y')]);
      const got = await fetchAll(b, me, ['x', 'y'], 3);
      expect(new Set(got.map((d) => `${d.queue}/${d.receipt}`)).size).toBe(3);
    });

    it('two handles on the same URL and namespace share one broker', async () => {
      const producer = await broker();
      const consumer = await broker();
      const me = await node(consumer, 'n1');
      await producer.enqueue([job('a')]);
      expect(ids(await fetchAll(consumer, me, ['q'], 1))).toEqual(['a']);
    });
  });

  describe('plans', () => {
    it('strict: the first queue’s quota is the whole batch; other queues only get what it leaves', async () => {
      const b = await broker();
      const me = await node(b, 'n1', ['hi', 'lo']);
      await b.enqueue([
        job('h1', 'hi'),
        job('h2', 'hi'),
        job('h3', 'hi'),
        job('h4', 'hi'),
        job('l1', 'lo'),
        job('l2', 'lo'),
      ]);
      const strict = (count: number) =>
        b.fetch({
          nodeId: me,
          plan: [
            { queue: 'hi', quota: count },
            { queue: 'lo', quota: 0 },
          ],
          count,
          settle: [],
        });
      expect(ids((await strict(3)).deliveries)).toEqual(['h1', 'h2', 'h3']);
      expect(ids((await strict(3)).deliveries)).toEqual(['h4', 'l1', 'l2']);
    });

    it('quotas first, then leftovers in plan order', async () => {
      const b = await broker();
      const me = await node(b, 'n1', ['x', 'y', 'z']);
      await b.enqueue([
        job('x1', 'x'),
        job('x2', 'x'),
        job('x3', 'x'),
        job('x4', 'x'),
        job('y1', 'y'),
        job('y2', 'y'),
        job('y3', 'y'),
        job('z1', 'z'),
      ]);
      const r = await b.fetch({
        nodeId: me,
        plan: [
          { queue: 'y', quota: 1 },
          { queue: 'x', quota: 2 },
          { queue: 'z', quota: 1 },
        ],
        count: 6,
        settle: [],
      });
      // pass 1: y1 | x1 x2 | z1; pass 2 (2 left): y2 y3
      expect(ids(r.deliveries)).toEqual(['y1', 'x1', 'x2', 'z1', 'y2', 'y3']);
      expect(r.fenced).toBe(false);
    });

    it('redelivered jobs are served before the main list, and count against the quota', async () => {
      const b = await broker();
      const me = await node(b, 'n1', ['x', 'y']);
      await b.enqueue([job('x1', 'x'), job('x2', 'x'), job('x3', 'x'), job('y1', 'y')]);
      const taken = await fetchAll(b, me, ['x'], 2);
      await b.settle([
        { kind: 'giveBack', delivery: taken[1]! },
        { kind: 'giveBack', delivery: taken[0]! },
      ]);
      const r = await b.fetch({
        nodeId: me,
        plan: [
          { queue: 'x', quota: 2 },
          { queue: 'y', quota: 1 },
        ],
        count: 4,
        settle: [],
      });
      expect(r.deliveries.map((d) => [d.job.id, d.job.redeliveries])).toEqual([
        ['x2', 1],
        ['x1', 1],
        ['y1', 0],
        ['x3', 0],
      ]);
    });
  });

  describe('delayed jobs', () => {
    it('are not delivered before they are due, and the fetch tells when the next one is', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      const before = Date.now();
      await b.enqueue([job('later', 'q', { delay: 60_000 }), job('eta', 'q', { eta: Date.now() + 120_000 })]);
      const r = await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 5 }], count: 5, settle: [] });
      expect(r.deliveries).toEqual([]);
      expect(r.nextDueAt).toBeGreaterThan(before);
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, delayed: 2 });
      const hb = await b.heartbeat(me, ['q']);
      const after = Date.now();
      // The same due time, each converted to this clock on its own reply: equal give or take the round trips.
      expect(Math.abs(hb.nextDueAt! - r.nextDueAt!)).toBeLessThanOrEqual(after - before + 1);
    });

    it('an eta in the past or a zero delay runs now', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('past', 'q', { eta: Date.now() - 1_000 }), job('zero', 'q', { delay: 0 })]);
      expect(ids(await fetchAll(b, me, ['q'], 5))).toEqual(['past', 'zero']);
    });

    it('are delivered in due order, each once due', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      const t0 = Date.now();
      await b.enqueue([job('d3', 'q', { delay: 450 }), job('d1', 'q', { delay: 150 }), job('d2', 'q', { delay: 300 })]);
      const got = await collect(b, me, ['q'], 3);
      expect(got.map((g) => g.d.job.id)).toEqual(['d1', 'd2', 'd3']);
      // Not early (a few ms of slack for clock granularity).
      const delay: Record<string, number> = { d1: 150, d2: 300, d3: 450 };
      for (const g of got) expect(g.at - t0).toBeGreaterThanOrEqual(delay[g.d.job.id]! - 5);
    });

    it('a delayed job enqueued while a node is blocked in waitForWork wakes it when due', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('far', 'q', { delay: 600_000 })]);
      expect(await fetchAll(b, me, ['q'], 1)).toEqual([]);
      const waiting = b.waitForWork(me, ['q'], LONG, never(), 5);
      await sleep(50); // let the wait block first
      const producer = await broker();
      const soonDue = Date.now() + 200;
      await producer.enqueue([job('soon', 'q', { delay: 200 })]);
      const reply = await waiting;
      // Woken for it: either with the job itself, or (WaitReply) with the earlier due time to fetch at.
      let got = reply.deliveries;
      if (got.length === 0) {
        expect(reply.nextDueAt).toBeLessThanOrEqual(soonDue + 50);
        await sleep(Math.max(0, reply.nextDueAt! - Date.now()));
        got = await fetchAll(b, me, ['q'], 5);
      }
      expect(ids(got)).toEqual(['soon']);
      expect((await b.counts(['q']))[0]).toMatchObject({ reserved: 1, delayed: 1 });
    });

    it('a job enqueued or given back while a node is blocked wakes it', async () => {
      const b = await broker();
      const me = await node(b, 'n1', ['x', 'y']);
      const other = await node(b, 'n2', ['y']);
      const first = b.waitForWork(me, ['x', 'y'], LONG, never(), 1);
      await sleep(50);
      await b.enqueue([job('y1', 'y')]);
      expect(ids((await first).deliveries)).toEqual(['y1']);
      await b.enqueue([job('y2', 'y')]);
      const held = await fetchAll(b, other, ['y'], 1);
      const second = b.waitForWork(me, ['x', 'y'], LONG, never(), 1);
      await sleep(50);
      await b.settle([{ kind: 'giveBack', delivery: held[0]! }]);
      expect((await second).deliveries.map((d) => [d.job.id, d.job.redeliveries])).toEqual([['y2', 1]]);
    });
  });

  describe('waitForWork', () => {
    it('returns nothing when aborted (before or during the wait) or when its timeout passes', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      const pre = new AbortController();
      pre.abort();
      expect((await b.waitForWork(me, ['q'], LONG, pre.signal, 1)).deliveries).toEqual([]);
      const during = new AbortController();
      const waiting = b.waitForWork(me, ['q'], LONG, during.signal, 1);
      setTimeout(() => during.abort(), 50);
      expect((await waiting).deliveries).toEqual([]);
      expect((await b.waitForWork(me, ['q'], 100, never(), 1)).deliveries).toEqual([]);
      // Nothing was reserved by the ended waits: a later job is still there for a fetch.
      await b.enqueue([job('a')]);
      expect(ids(await fetchAll(b, me, ['q'], 1))).toEqual(['a']);
    });

    it('takes waiting jobs at once, reserving at most count', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue(['a', 'b', 'c'].map((id) => job(id)));
      const reply = await b.waitForWork(me, ['q'], LONG, never(), 2);
      expect(ids(reply.deliveries)).toEqual(['a', 'b']);
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 1, reserved: 2 });
    });
  });

  describe('retries and dead letters', () => {
    it('retry puts the job in the delayed set with attempt + 1; it comes back when due', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('a')]);
      const [d] = await fetchAll(b, me, ['q'], 1);
      await b.settle([{ kind: 'retry', delivery: d!, delay: 200, result: result(d!, 'RETRY') }]);
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 0, delayed: 1 });
      expect((await b.getResult('a'))?.state).toBe('RETRY');
      const got = await collect(b, me, ['q'], 1);
      expect(got.map((g) => [g.d.job.id, g.d.job.attempt, g.d.job.redeliveries])).toEqual([['a', 1, 0]]);
    });

    it('a retry is an outcome: it resets the redeliveries, so deliveries lost in earlier attempts never make it a poison job', async () => {
      const short = await broker({ leaseMs: MIN_LEASE_MS });
      const long = await broker({ leaseMs: 60_000 });
      const a = await node(short, 'node-a');
      const bNode = await node(long, 'node-b');
      // Redelivered twice before this attempt ended in a retry (its nodes died under it).
      await long.enqueue([job('j', 'q', { redeliveries: 2 })]);
      const [d] = await fetchAll(short, a, ['q'], 1);
      await short.settle([{ kind: 'retry', delivery: d!, delay: 0 }]);
      const [again] = (await collect(short, a, ['q'], 1)).map((g) => g.d);
      expect([again?.job.attempt, again?.job.redeliveries]).toEqual([1, 0]);
      // Node a dies under the retry: with maxRedeliveries 2, this is its first redelivery, not its third.
      await sleep(MIN_LEASE_MS + 150);
      expect(await long.recover(a, bNode, 2)).toBe(1);
      expect(await long.listDead('q', 10)).toEqual([]);
      const [back] = await fetchAll(long, bNode, ['q'], 1);
      expect([back?.job.id, back?.job.attempt, back?.job.redeliveries]).toEqual(['j', 1, 1]);
    });

    it('a retry delay a task got wrong loses no job: NaN retries now, Infinity waits in the delayed set', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('a'), job('b')]);
      const [a, bb] = await fetchAll(b, me, ['q'], 2);
      await b.settle([
        { kind: 'retry', delivery: a!, delay: Number.NaN },
        { kind: 'retry', delivery: bb!, delay: Number.POSITIVE_INFINITY },
      ]);
      expect((await b.counts(['q']))[0]).toMatchObject({ reserved: 0, delayed: 2 });
      const again = await fetchAll(b, me, ['q'], 2);
      expect(again.map((d) => [d.job.id, d.job.attempt])).toEqual([['a', 1]]);
      expect((await b.counts(['q']))[0]).toMatchObject({ reserved: 1, delayed: 1 });
    });

    it('dead: listed newest first with the reason, retried by id or all (attempt and redeliveries reset), purged', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('a'), job('b'), job('c', 'q', { attempt: 2 }), job('d')]);
      const got = await fetchAll(b, me, ['q'], 4);
      await b.settle(got.map((delivery) => ({ kind: 'dead' as const, delivery, reason: `bad ${delivery.job.id}` })));
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 0, dead: 4 });
      const dead = await b.listDead('q', 10);
      expect(dead.map((x) => [x.job.id, x.reason])).toEqual([
        ['d', 'bad d'],
        ['c', 'bad c'],
        ['b', 'bad b'],
        ['a', 'bad a'],
      ]);
      expect(dead.every((x) => typeof x.diedAt === 'number' && x.diedAt > 0)).toBe(true);
      expect(ids(await b.listDead('q', 2))).toEqual(['d', 'c']);
      expect(await b.retryDead('q', ['c'])).toBe(1);
      expect((await fetchAll(b, me, ['q'], 5)).map((x) => [x.job.id, x.job.attempt, x.job.redeliveries])).toEqual([
        ['c', 0, 0],
      ]);
      expect(await b.retryDead('q', [])).toBe(0);
      expect(await b.retryDead('q', ['nope'])).toBe(0);
      expect(await b.retryDead('q', ['a'])).toBe(1);
      expect(await b.purgeDead('q')).toBe(2);
      expect((await b.counts(['q']))[0]).toMatchObject({ dead: 0, waiting: 1 });
      expect(await b.listDead('q', 10)).toEqual([]);
    });

    it("a retried dead job's stored failure is dropped, by id or all: it is no longer its outcome", async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('a'), job('b'), job('c')]);
      const got = await fetchAll(b, me, ['q'], 3);
      await b.settle(
        got.map((delivery) => ({
          kind: 'dead' as const,
          delivery,
          reason: 'bad',
          result: result(delivery, 'FAILURE'),
        })),
      );
      expect((await b.getResults(['a', 'b', 'c'])).map((r) => r?.state)).toEqual(['FAILURE', 'FAILURE', 'FAILURE']);
      expect(await b.retryDead('q', ['a'])).toBe(1);
      expect((await b.getResults(['a', 'b', 'c'])).map((r) => r?.state)).toEqual([undefined, 'FAILURE', 'FAILURE']);
      // Deleted, a dead job keeps its failure: that stays its outcome.
      expect(await b.purgeDead('q', ['b'])).toBe(1);
      expect((await b.getResult('b'))?.state).toBe('FAILURE');
      expect(await b.retryDead('q', undefined)).toBe(1);
      expect(await b.getResult('c')).toBeUndefined();
      expect(ids(await fetchAll(b, me, ['q'], 5)).sort()).toEqual(['a', 'c']);
    });

    it("a retried dead job's unread announcement goes with its failure: the client's next wait waits for the new run", async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      // a's record rides in its announcement (replyInline), c's announcement is its id.
      await b.enqueue([
        job('a', 'q', { replyTo: 'client-1', replyInline: true }),
        job('b', 'q', { replyTo: 'client-1', replyInline: true }),
        job('c', 'q', { replyTo: 'client-1' }),
      ]);
      const got = await fetchAll(b, me, ['q'], 3);
      // All die and are announced to client-1, which is not waiting: the announcements wait on its list.
      await b.settle(
        got.map((delivery) => ({
          kind: 'dead' as const,
          delivery,
          reason: 'bad',
          result: result(delivery, 'FAILURE'),
        })),
      );
      expect(await b.retryDead('q', ['a', 'c'])).toBe(2);
      // Only b's failure is handed over: a's and c's runs are to come, their old failures no longer their outcomes.
      const read = await b.waitForResults('client-1', LONG);
      expect(read.records.map((r) => [r.id, r.state])).toEqual([['b', 'FAILURE']]);
      expect(read.gone).toEqual([]);
      // The new run's end is announced as usual.
      const again = await fetchAll(b, me, ['q'], 2);
      expect(ids(again).sort()).toEqual(['a', 'c']);
      await b.settle(again.map((delivery) => ack(delivery, result(delivery, 'SUCCESS'))));
      const next = await b.waitForResults('client-1', LONG);
      expect(next.records.map((r) => [r.id, r.state]).sort()).toEqual([
        ['a', 'SUCCESS'],
        ['c', 'SUCCESS'],
      ]);
    });

    it('purgeDead with ids drops only those dead jobs', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('a'), job('b'), job('c')]);
      const got = await fetchAll(b, me, ['q'], 3);
      await b.settle(got.map((delivery) => ({ kind: 'dead' as const, delivery, reason: 'bad' })));
      expect(await b.purgeDead('q', [])).toBe(0);
      expect(await b.purgeDead('q', ['nope'])).toBe(0);
      expect(await b.purgeDead('q', ['b', 'nope'])).toBe(1);
      expect(ids(await b.listDead('q', 10))).toEqual(['c', 'a']);
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, dead: 2 });
    });

    it('retryDead with no ids takes every dead job back', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('a'), job('b')]);
      const got = await fetchAll(b, me, ['q'], 2);
      await b.settle(got.map((delivery) => ({ kind: 'dead' as const, delivery, reason: 'x' })));
      expect(await b.retryDead('q', undefined)).toBe(2);
      expect(ids(await fetchAll(b, me, ['q'], 5)).sort()).toEqual(['a', 'b']);
    });

    it("changeDead: many ids in one call, the ones it moved named in the order given, a workflow's job left dead", async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      const flow = compileWorkflow(chain(task('step', [1]), task('next')), 'wf-1', (sig) =>
        job(`m-${sig.name}`, 'q', { task: sig.name }),
      );
      await b.enqueue([job('a'), job('b'), job('c'), job('d')], [flow]);
      const got = await fetchAll(b, me, ['q'], 5);
      expect(ids(got).sort()).toEqual(['a', 'b', 'c', 'd', 'm-step']);
      const failure = { id: 'm-step', name: 'step', error: { name: 'Error', message: 'bad' } };
      await b.settle(
        got.map((delivery) =>
          delivery.job.workflow === undefined
            ? { kind: 'dead' as const, delivery, reason: 'bad' }
            : { kind: 'dead' as const, delivery, reason: 'bad', outcome: { ok: false as const, failure } },
        ),
      );
      expect(await b.changeDead('q', 'retry', [])).toEqual({ count: 0, moved: [], inWorkflow: [], inUse: [] });
      expect(await b.changeDead('q', 'retry', ['c', 'nope', 'm-step', 'a', 'c'])).toEqual({
        count: 2,
        moved: ['c', 'a'],
        inWorkflow: [{ id: 'm-step', workflow: 'wf-1' }],
        inUse: [],
      });
      // Back in the order asked for, as one id at a time would have put them (a died before c).
      expect(ids(await fetchAll(b, me, ['q'], 5))).toEqual(['c', 'a']);
      const deleted = await b.changeDead('q', 'delete', ['m-step', 'nope', 'b']);
      expect(deleted).toEqual({ count: 2, moved: ['m-step', 'b'], inWorkflow: [], inUse: [] });
      expect(ids(await b.listDead('q', 10))).toEqual(['d']);
      expect(await b.changeDead('q', 'retry', undefined)).toEqual({ count: 1, moved: [], inWorkflow: [], inUse: [] });
      expect(ids(await fetchAll(b, me, ['q'], 5))).toEqual(['d']);
      expect(await b.changeDead('elsewhere', 'delete', ['d'])).toEqual({
        count: 0,
        moved: [],
        inWorkflow: [],
        inUse: [],
      });
    });

    it("changeDead retrying all leaves the workflows' jobs dead, newest first", async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      const flows = ['wf-1', 'wf-2'].map((id) =>
        compileWorkflow(chain(task('step'), task('next')), id, (sig) => job(`${id}-${sig.name}`)),
      );
      await b.enqueue([job('a')], flows);
      const got = await fetchAll(b, me, ['q'], 3);
      for (const delivery of got) {
        const failure = { id: delivery.job.id, name: 'step', error: { name: 'Error', message: 'bad' } };
        await b.settle([{ kind: 'dead', delivery, reason: 'bad', outcome: { ok: false, failure } }]);
      }
      const newestFirst = ids(await b.listDead('q', 10)).filter((id) => id !== 'a');
      expect([...newestFirst].sort()).toEqual(['wf-1-step', 'wf-2-step']);
      expect(await b.changeDead('q', 'retry', undefined)).toEqual({
        count: 1,
        moved: [],
        inWorkflow: newestFirst.map((id) => ({ id, workflow: id.replace(/-step$/, '') })),
        inUse: [],
      });
      expect(ids(await b.listDead('q', 10))).toEqual(newestFirst);
    });

    it("changeDead moves every dead job of an id given (a job's own id used twice), naming the id once", async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('a'), job('a'), job('b')]);
      const got = await fetchAll(b, me, ['q'], 3);
      await b.settle(got.map((delivery) => ({ kind: 'dead' as const, delivery, reason: 'bad' })));
      expect(await b.changeDead('q', 'delete', ['a'])).toEqual({ count: 2, moved: ['a'], inWorkflow: [], inUse: [] });
      expect(ids(await b.listDead('q', 10))).toEqual(['b']);
    });

    it('a retry leaves dead a job whose id a live job has: its own id enqueued again, or dead twice', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      const own = (id: string): NewJob => job(id, 'q', { ownId: true });
      // Each dies with no result kept, so its own id is free to enqueue again at once.
      const die = async (): Promise<void> => {
        const got = await fetchAll(b, me, ['q'], 10);
        await b.settle(got.map((delivery) => ({ kind: 'dead' as const, delivery, reason: 'bad' })));
      };
      await b.enqueue([own('a'), own('b'), own('c')]);
      await die();
      // a dies again under the same id; b is enqueued again and waits.
      expect(await b.enqueue([own('a')])).toEqual([undefined]);
      await die();
      expect(await b.enqueue([own('b')])).toEqual([undefined]);
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 1, dead: 4 });
      const change = await b.changeDead('q', 'retry', ['a', 'b']);
      // a's oldest copy is requeued, its other one and b stay dead: no id waits twice.
      expect([change.count, change.moved]).toEqual([1, ['a']]);
      expect([...change.inUse].sort()).toEqual(['a', 'b']);
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 2, dead: 3 });
      const all = await b.changeDead('q', 'retry', undefined);
      expect([all.count, [...all.inUse].sort()]).toEqual([1, ['a', 'b']]);
      expect(ids(await fetchAll(b, me, ['q'], 10)).sort()).toEqual(['a', 'b', 'c']);
      // Deleted, every copy goes.
      expect((await b.changeDead('q', 'delete', ['a', 'b'])).count).toBe(2);
    });

    it('the dead set keeps at most deadMax jobs, dropping the oldest', async () => {
      const b = await broker({ deadMax: 2 });
      const me = await node(b, 'n1');
      await b.enqueue(['a', 'b', 'c'].map((id) => job(id)));
      const got = await fetchAll(b, me, ['q'], 3);
      for (const delivery of got) await b.settle([{ kind: 'dead', delivery, reason: 'x' }]);
      expect(ids(await b.listDead('q', 10))).toEqual(['c', 'b']);
    });
  });

  describe('results', () => {
    it('are stored with their state and value, and progress overwrites nothing final', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('r1')]);
      const [d] = await fetchAll(b, me, ['q'], 1);
      await b.settle([
        { kind: 'progress', delivery: d!, result: result(d!, 'STARTED', { node: me, pid: 42, startedAt: 1 }) },
      ]);
      expect(await b.getResult('r1')).toMatchObject({ id: 'r1', state: 'STARTED', node: me, pid: 42 });
      expect((await b.counts(['q']))[0]).toMatchObject({ reserved: 1 }); // progress settles nothing
      await b.settle([ack(d!, result(d!, 'SUCCESS', { value: { n: [1, 'two', null] }, runtime: 7 }))]);
      expect(await b.getResult('r1')).toMatchObject({
        id: 'r1',
        task: 'work',
        queue: 'q',
        state: 'SUCCESS',
        value: { n: [1, 'two', null] },
        runtime: 7,
        retries: 0,
      });
      expect(await b.getResult('unknown')).toBeUndefined();
    });

    it('waitForResults returns nothing when aborted, before or during the wait', async () => {
      const b = await broker();
      // Far past the test's timeout: only the abort can end these waits.
      const FOREVER = 600_000;
      const pre = new AbortController();
      pre.abort();
      expect(await b.waitForResults('client-1', FOREVER, pre.signal)).toMatchObject({ records: [], gone: [] });
      const during = new AbortController();
      const waiting = b.waitForResults('client-1', FOREVER, during.signal);
      setTimeout(() => during.abort(), 50);
      expect(await waiting).toMatchObject({ records: [], gone: [] });
    });

    it('waitForResults wakes for final states only (SUCCESS, FAILURE) of jobs that name the client', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([
        job('ok', 'q', { replyTo: 'client-1' }),
        job('bad', 'q', { replyTo: 'client-1' }),
        job('other', 'q', { replyTo: 'client-2' }),
      ]);
      const [ok, bad, other] = await fetchAll(b, me, ['q'], 3);
      const client = await broker();
      const waiting = client.waitForResults('client-1', LONG);
      await sleep(50);
      await b.settle([
        { kind: 'progress', delivery: ok!, result: result(ok!, 'STARTED') },
        ack(other!, result(other!, 'SUCCESS', { value: 'not yours' })),
      ]);
      await b.settle([ack(ok!, result(ok!, 'SUCCESS', { value: 42 }))]);
      const first = (await waiting).records;
      expect(first.map((r) => [r.id, r.state, r.value])).toEqual([['ok', 'SUCCESS', 42]]);
      await b.settle([
        {
          kind: 'dead',
          delivery: bad!,
          reason: 'boom',
          result: result(bad!, 'FAILURE', { error: { name: 'Error', message: 'boom' } }),
        },
      ]);
      const second = (await client.waitForResults('client-1', LONG)).records;
      expect(second.map((r) => [r.id, r.state, r.error?.message])).toEqual([['bad', 'FAILURE', 'boom']]);
      expect((await client.waitForResults('client-2', LONG)).records.map((r) => r.id)).toEqual(['other']);
      expect((await client.waitForResults('client-1', 100)).records).toEqual([]);
    });

    it('expire after the result TTL', async () => {
      const b = await broker({ resultTtl: 150 });
      const me = await node(b, 'n1');
      await b.enqueue([job('short')]);
      const [d] = await fetchAll(b, me, ['q'], 1);
      await b.settle([ack(d!, result(d!, 'SUCCESS', { value: 1 }))]);
      expect((await b.getResult('short'))?.state).toBe('SUCCESS');
      await sleep(400);
      expect(await b.getResult('short')).toBeUndefined();
    });

    it('no result passed, or a job with ignoreResult: getResult stays undefined', async () => {
      const b = await broker();
      const me = await node(b, 'n1');
      await b.enqueue([job('plain'), job('ignored', 'q', { options: { ignoreResult: true } })]);
      const [plain, ignored] = await fetchAll(b, me, ['q'], 2);
      await b.settle([ack(plain!), ack(ignored!, result(ignored!, 'SUCCESS', { value: 1 }))]);
      expect(await b.getResult('plain')).toBeUndefined();
      expect(await b.getResult('ignored')).toBeUndefined();
    });
  });

  describe('membership, recovery and fencing', () => {
    it('registered nodes are listed and renew their lease; an unregistered one is not', async () => {
      const b = await broker();
      await node(b, 'n1', ['x']);
      await node(b, 'n2', ['y', 'z']);
      const listed = await b.listNodes();
      expect(listed.map((n) => n.id).sort()).toEqual(['n1', 'n2']);
      expect(listed.find((n) => n.id === 'n2')).toMatchObject({
        name: 'n2@test',
        host: 'test',
        pid: process.pid,
        queues: ['y', 'z'],
        concurrency: '1',
      });
      expect(await b.heartbeat('n1', ['x'])).toMatchObject({ fenced: false, expired: [] });
      await b.unregister('n2');
      expect((await b.listNodes()).map((n) => n.id)).toEqual(['n1']);
      expect((await b.heartbeat('n2', ['y'])).fenced).toBe(true);
    });

    it("updateNode changes a live node's description; a node that left is not written back", async () => {
      const b = await broker();
      await node(b, 'n1', ['x']);
      expect(await b.updateNode('n1', { concurrency: '5,2' })).toBe(true);
      expect((await b.listNodes()).find((n) => n.id === 'n1')).toMatchObject({ concurrency: '5,2', queues: ['x'] });
      await b.unregister('n1');
      expect(await b.updateNode('n1', { concurrency: '6,2' })).toBe(false);
      await node(b, 'n1', ['x']);
      expect((await b.listNodes()).find((n) => n.id === 'n1')).toMatchObject({ concurrency: '1' });
    });

    it('a live node keeps its jobs; once its lease expires another node recovers them all, redeliveries + 1, with new receipts', async () => {
      const short = await broker({ leaseMs: MIN_LEASE_MS });
      const long = await broker({ leaseMs: 60_000 });
      const a = await node(short, 'node-a');
      const bNode = await node(long, 'node-b');
      await long.enqueue(['j1', 'j2', 'j3', 'j4'].map((id) => job(id)));
      const heldByA = await fetchAll(short, a, ['q'], 3);
      expect(ids(heldByA)).toEqual(['j1', 'j2', 'j3']);
      expect(await long.recover(a, bNode, 5)).toBe(0); // alive
      expect((await long.counts(['q']))[0]).toMatchObject({ waiting: 1, reserved: 3 });
      await sleep(MIN_LEASE_MS + 150);
      expect((await long.heartbeat(bNode, ['q'])).expired).toContain(a);
      expect(await long.recover(a, bNode, 5)).toBe(3);
      expect(await long.recover(a, bNode, 5)).toBe(0); // done once
      expect((await long.counts(['q']))[0]).toMatchObject({ waiting: 4, reserved: 0 });
      const got = await fetchAll(long, bNode, ['q'], 10);
      expect(ids(got).sort()).toEqual(['j1', 'j2', 'j3', 'j4']);
      for (const d of got) expect(d.job.redeliveries).toBe(d.job.id === 'j4' ? 0 : 1);
      expect(ids(got).slice(0, 3).sort()).toEqual(['j1', 'j2', 'j3']); // redelivered first
      const oldReceipts = new Set(heldByA.map((d) => d.receipt));
      for (const d of got) expect(oldReceipts.has(d.receipt)).toBe(false);
      expect((await short.heartbeat(a, ['q'])).fenced).toBe(true);
    });

    it('past maxRedeliveries a recovered job goes to the dead set (poison job)', async () => {
      const short = await broker({ leaseMs: MIN_LEASE_MS });
      const long = await broker({ leaseMs: 60_000 });
      const a = await node(short, 'node-a');
      const bNode = await node(long, 'node-b');
      await long.enqueue([job('poison', 'q', { redeliveries: 2 }), job('fine', 'q', { redeliveries: 1 })]);
      await fetchAll(short, a, ['q'], 2);
      await sleep(MIN_LEASE_MS + 150);
      expect(await long.recover(a, bNode, 2)).toBe(2);
      const dead = await long.listDead('q', 10);
      expect(dead.map((x) => [x.job.id, x.job.redeliveries])).toEqual([['poison', 3]]);
      expect(dead[0]?.reason).toMatch(/deliver/i);
      expect((await fetchAll(long, bNode, ['q'], 5)).map((d) => [d.job.id, d.job.redeliveries])).toEqual([['fine', 2]]);
    });

    it('a poison job buried by a recovery fails: a WorkerLostError naming why, stored and announced to its client', async () => {
      const short = await broker({ leaseMs: MIN_LEASE_MS });
      const long = await broker({ leaseMs: 60_000 });
      const a = await node(short, 'node-a');
      const bNode = await node(long, 'node-b');
      await long.enqueue([job('poison', 'q', { redeliveries: 2, replyTo: 'c1' })]);
      await fetchAll(short, a, ['q'], 1);
      await sleep(MIN_LEASE_MS + 150);
      expect(await long.recover(a, bNode, 2)).toBe(1);
      const failure = {
        id: 'poison',
        task: 'work',
        queue: 'q',
        state: 'FAILURE',
        error: { name: 'WorkerLostError', props: { code: 'PREFORK_WORKER_LOST' } },
      };
      const stored = await long.getResult('poison');
      expect(stored).toMatchObject(failure);
      expect(stored?.error?.message).toMatch(/delivered 3 times without an outcome/);
      expect((await long.waitForResults('c1', 2_000)).records).toEqual([stored]);
    });

    it('a fenced node (lease expired, then recovered) fetches nothing, and its late settlements change nothing', async () => {
      const short = await broker({ leaseMs: MIN_LEASE_MS });
      const long = await broker({ leaseMs: 60_000 });
      const a = await node(short, 'node-a');
      const bNode = await node(long, 'node-b');
      await long.enqueue(['j1', 'j2', 'j3', 'j4'].map((id) => job(id)));
      const held = await fetchAll(short, a, ['q'], 4);
      await sleep(MIN_LEASE_MS + 150);
      expect(await long.recover(a, bNode, 5)).toBe(4);
      const mine = await fetchAll(long, bNode, ['q'], 10);
      expect(ids(mine).sort()).toEqual(['j1', 'j2', 'j3', 'j4']);
      const [h1, h2, h3, h4] = held;
      const late = await short.fetch({
        nodeId: a,
        plan: [{ queue: 'q', quota: 4 }],
        count: 4,
        settle: [
          ack(h1!),
          { kind: 'retry', delivery: h2!, delay: 0 },
          { kind: 'dead', delivery: h3!, reason: 'late' },
          { kind: 'giveBack', delivery: h4! },
        ],
      });
      expect(late).toMatchObject({ fenced: true, deliveries: [] });
      expect((await long.counts(['q']))[0]).toEqual({ queue: 'q', waiting: 0, reserved: 4, delayed: 0, dead: 0 });
      // The live copies still settle normally.
      await long.settle(mine.map((d) => ack(d)));
      expect((await long.counts(['q']))[0]).toEqual({ queue: 'q', waiting: 0, reserved: 0, delayed: 0, dead: 0 });
    });

    it("a fenced node's late results overwrite none the run that replaced it stored, and stand where none is", async () => {
      const short = await broker({ leaseMs: MIN_LEASE_MS });
      const long = await broker({ leaseMs: 60_000 });
      const a = await node(short, 'node-a');
      const bNode = await node(long, 'node-b');
      await long.enqueue([job('j1', 'q', { replyTo: 'c1' }), job('j2', 'q', { replyTo: 'c1' })]);
      const [h1, h2] = await fetchAll(short, a, ['q'], 2);
      await sleep(MIN_LEASE_MS + 150);
      expect(await long.recover(a, bNode, 5)).toBe(2);
      const mine = await fetchAll(long, bNode, ['q'], 10);
      const live1 = mine.find((d) => d.job.id === 'j1')!;
      await long.settle([ack(live1, result(live1, 'SUCCESS', { value: 'live', node: bNode }))]);
      expect((await long.waitForResults('c1', LONG)).records).toMatchObject([{ id: 'j1', value: 'live' }]);
      const late = await short.fetch({
        nodeId: a,
        plan: [{ queue: 'q', quota: 2 }],
        count: 2,
        settle: [
          { kind: 'dead', delivery: h1!, reason: 'late', result: result(h1!, 'FAILURE', { node: a }) },
          ack(h2!, result(h2!, 'SUCCESS', { value: 'late', node: a })),
        ],
      });
      expect(late).toMatchObject({ fenced: true, deliveries: [] });
      // j1's live outcome stays, and is not announced again; j2 has no other outcome yet, so the late one stands.
      expect(await long.getResult('j1')).toMatchObject({ state: 'SUCCESS', value: 'live', node: bNode });
      expect(await long.getResult('j2')).toMatchObject({ state: 'SUCCESS', value: 'late', node: a });
      expect((await long.waitForResults('c1', LONG)).records.map((r) => r.id)).toEqual(['j2']);
    });

    it("a fenced node's late ack frees no unique key that the recovered copy of its job still holds", async () => {
      const short = await broker({ leaseMs: MIN_LEASE_MS });
      const long = await broker({ leaseMs: 60_000 });
      const a = await node(short, 'node-a');
      const bNode = await node(long, 'node-b');
      expect(await long.enqueue([job('j1', 'q', { uniqueKey: 'k1' })])).toEqual([undefined]);
      const [h1] = await fetchAll(short, a, ['q'], 1);
      await sleep(MIN_LEASE_MS + 150);
      expect(await long.recover(a, bNode, 5)).toBe(1);
      const [live] = await fetchAll(long, bNode, ['q'], 5);
      const late = await short.fetch({ nodeId: a, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [ack(h1!)] });
      expect(late).toMatchObject({ fenced: true, deliveries: [] });
      // j1 still runs on node-b: the key is still its.
      expect(await long.enqueue([job('j2', 'q', { uniqueKey: 'k1' })])).toEqual(['j1']);
      await long.settle([ack(live!)]);
      expect(await long.enqueue([job('j3', 'q', { uniqueKey: 'k1' })])).toEqual([undefined]);
    });

    it('a fenced node (unregistered) fetches nothing and its late acks leave the jobs for others', async () => {
      const b = await broker();
      const a = await node(b, 'node-a');
      const bNode = await node(b, 'node-b');
      await b.enqueue([job('j1'), job('j2')]);
      const held = await fetchAll(b, a, ['q'], 2);
      await b.unregister(a);
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 2, reserved: 0 });
      expect(
        await b.fetch({ nodeId: a, plan: [{ queue: 'q', quota: 2 }], count: 2, settle: held.map((d) => ack(d)) }),
      ).toMatchObject({ fenced: true, deliveries: [] });
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 2, reserved: 0 });
      expect((await fetchAll(b, bNode, ['q'], 5)).map((d) => [d.job.id, d.job.redeliveries])).toEqual([
        ['j1', 1],
        ['j2', 1],
      ]);
    });

    it('a node fenced while blocked in waitForWork is not handed the job that wakes it: the job stays for the others', async () => {
      const b = await broker();
      const a = await node(b, 'node-a');
      const bNode = await node(b, 'node-b');
      const waiting = b.waitForWork(a, ['q'], 2_000, never(), 5);
      await sleep(50);
      await b.unregister(a);
      await b.enqueue([job('j1')]);
      expect((await waiting).deliveries).toEqual([]);
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 1, reserved: 0 });
      expect(ids(await fetchAll(b, bNode, ['q'], 5))).toEqual(['j1']);
    });

    it('a node whose lease ran out but was not recovered yet is not fenced: its settlements apply, it fetches, and its heartbeat renews the lease and says it had run out', async () => {
      const short = await broker({ leaseMs: MIN_LEASE_MS });
      const long = await broker({ leaseMs: 60_000 });
      const a = await node(short, 'node-a');
      const other = await node(long, 'node-b');
      await short.enqueue([job('j1'), job('j2')]);
      const held = await fetchAll(short, a, ['q'], 1);
      await sleep(MIN_LEASE_MS + 150);
      // Nobody took its jobs (as when Redis itself was stopped past every lease): they are still its own.
      const reply = await short.fetch({
        nodeId: a,
        plan: [{ queue: 'q', quota: 1 }],
        count: 1,
        settle: held.map((d) => ack(d)),
      });
      expect(reply).toMatchObject({ fenced: false });
      expect(ids(reply.deliveries)).toEqual(['j2']);
      const beat = await short.heartbeat(a, ['q']);
      expect(beat.fenced).toBe(false);
      expect(beat.lapsedMs).toBeGreaterThan(0);
      // Renewed: a recovery now finds it live and takes nothing; its next beat is an ordinary one.
      expect(await long.recover(a, other, 5)).toBe(0);
      expect((await long.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 1 });
      expect((await short.heartbeat(a, ['q'])).lapsedMs).toBeUndefined();
    });

    it('a node re-registering under a new id adopts what its old, expired id still holds: the new lease covers it, nothing is recovered', async () => {
      const short = await broker({ leaseMs: MIN_LEASE_MS });
      const long = await broker({ leaseMs: 60_000 });
      const a = await node(short, 'node-a');
      const other = await node(long, 'node-b');
      await long.enqueue([job('j1'), job('j2'), job('j3')]);
      const held = await fetchAll(short, a, ['q'], 2);
      await sleep(MIN_LEASE_MS + 150);
      const info = { id: 'node-a2', name: 'node-a@test', host: 'test', pid: process.pid, queues: ['q'] };
      expect(await short.register({ ...info, concurrency: '1', startedAt: Date.now() }, a)).toBe(2);
      expect((await short.heartbeat(a, ['q'])).fenced).toBe(true);
      expect((await long.listNodes()).map((n) => n.id).sort()).toEqual(['node-a2', 'node-b']);
      expect(await long.recover(a, other, 5)).toBe(0);
      expect((await long.counts(['q']))[0]).toMatchObject({ waiting: 1, reserved: 2 });
      // Under its new id the node settles them as its own.
      const next = await fetchAll(
        short,
        'node-a2',
        ['q'],
        1,
        held.map((d) => ack(d)),
      );
      expect(ids(next)).toEqual(['j3']);
      expect((await long.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 1 });
    });

    it('a live id is not adopted: its jobs stay its own', async () => {
      const b = await broker();
      const x = await node(b, 'node-x');
      await b.enqueue([job('j1')]);
      const held = await fetchAll(b, x, ['q'], 1);
      const info = { id: 'node-y', name: 'node-y@test', host: 'test', pid: process.pid, queues: ['q'] };
      expect(await b.register({ ...info, concurrency: '1', startedAt: Date.now() }, x)).toBe(0);
      expect((await b.heartbeat(x, ['q'])).fenced).toBe(false);
      await b.unregister('node-y');
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 1 });
      await fetchAll(
        b,
        x,
        ['q'],
        0,
        held.map((d) => ack(d)),
      );
      expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 0 });
    });
  });

  describe('admin', () => {
    it('purge drops waiting (given-back included) and delayed jobs, not reserved ones, and says how many', async () => {
      const b = await broker();
      const me = await node(b, 'n1', ['p', 'other']);
      await b.enqueue([
        job('a', 'p'),
        job('b', 'p'),
        job('c', 'p'),
        job('d', 'p', { delay: 60_000 }),
        job('o', 'other'),
      ]);
      const [first, second] = await fetchAll(b, me, ['p'], 2);
      await b.settle([{ kind: 'giveBack', delivery: first! }]);
      expect(await b.purge('p')).toBe(3); // a (given back), c, d
      expect(await b.counts(['p', 'other'])).toEqual([
        { queue: 'p', waiting: 0, reserved: 1, delayed: 0, dead: 0 },
        { queue: 'other', waiting: 1, reserved: 0, delayed: 0, dead: 0 },
      ]);
      await b.settle([ack(second!)]);
      expect(await b.purge('p')).toBe(0);
    });

    it('knownQueues lists every queue a job was enqueued to or a node registered for, and nothing merely counted', async () => {
      const b = await broker();
      await b.enqueue([job('a', 'q1'), job('b', 'q2', { delay: 60_000 })]);
      await node(b, 'n1', ['q3']);
      expect(await b.counts(['never-used'])).toEqual([
        { queue: 'never-used', waiting: 0, reserved: 0, delayed: 0, dead: 0 },
      ]);
      expect(await b.listDead('never-used', 5)).toEqual([]);
      expect(await b.knownQueues()).toEqual(['q1', 'q2', 'q3']);
    });

    it("knownQueues lists a workflow's queues from its enqueue, the queues of steps not started yet too", async () => {
      const b = await broker();
      const flow = compileWorkflow(chain(task('first'), task('later')), 'wf-known', (sig) =>
        job(`m-${sig.name}`, sig.name === 'first' ? 'wf-now' : 'wf-later', { task: sig.name }),
      );
      await b.enqueue([], [flow]);
      expect(await b.knownQueues()).toEqual(['wf-later', 'wf-now']);
    });
  });

  describe('paused queues', () => {
    it('are remembered on every node or on one node by name; resume without a node lifts them all', async () => {
      const b = await broker();
      expect(await b.listPaused()).toEqual([]);
      expect(await b.pauseQueue('p')).toBe(true);
      expect(await b.pauseQueue('p')).toBe(false);
      expect(await b.pauseQueue('p', 'node b')).toBe(true);
      expect(await b.pauseQueue('p', 'a')).toBe(true);
      expect(await b.pauseQueue('o', 'a')).toBe(true);
      expect(await b.listPaused()).toEqual([
        { queue: 'o', node: 'a' },
        { queue: 'p' },
        { queue: 'p', node: 'a' },
        { queue: 'p', node: 'node b' },
      ]);
      // On one node: that pause only (the pause on every node stays).
      expect(await b.resumeQueue('p', 'a')).toBe(1);
      expect(await b.resumeQueue('p', 'a')).toBe(0);
      expect(await b.listPaused()).toEqual([{ queue: 'o', node: 'a' }, { queue: 'p' }, { queue: 'p', node: 'node b' }]);
      expect(await b.resumeQueue('p')).toBe(2);
      expect(await b.listPaused()).toEqual([{ queue: 'o', node: 'a' }]);
      expect(await b.resumeQueue('never-paused')).toBe(0);
    });

    it('refuse a bad queue or node name, naming it, and change nothing', async () => {
      const b = await broker();
      await expect(b.pauseQueue('a b')).rejects.toThrow(/invalid option queue: "a b"/);
      await expect(b.pauseQueue('p', '')).rejects.toThrow(/invalid option node/);
      await expect(b.resumeQueue('x:y')).rejects.toThrow(/invalid option queue/);
      expect(await b.listPaused()).toEqual([]);
    });
  });
  describe('a closed handle', () => {
    it('refuses every call with BrokerClosedError, and another handle finds nothing it was given', async () => {
      const b = await broker();
      const other = await broker();
      await node(b, 'n1');
      await b.close();
      const calls: [string, () => Promise<unknown>][] = [
        ['connect', () => b.connect()],
        ['enqueue', () => b.enqueue([job('after-close')])],
        ['getResult', () => b.getResult('after-close')],
        ['getResults', () => b.getResults(['after-close'])],
        ['locate', () => b.locate('after-close')],
        ['removeWaiting', () => b.removeWaiting('after-close')],
        ['fetch', () => b.fetch({ nodeId: 'n1', plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })],
        ['settle', () => b.settle([])],
        ['waitForResults', () => b.waitForResults('c', 50)],
        ['register', () => node(b, 'n2')],
        ['heartbeat', () => b.heartbeat('n1', ['q'])],
        ['revoke', () => b.revoke(['after-close'], { terminate: false, grace: 1 })],
        ['counts', () => b.counts(['q'])],
        ['purge', () => b.purge('q')],
        ['pauseQueue', () => b.pauseQueue('q')],
        ['setRateLimit', () => b.setRateLimit('work', '1/s')],
        ['listSchedule', () => b.listSchedule()],
      ];
      for (const [name, call] of calls) await expect(call(), name).rejects.toMatchObject({ name: 'BrokerClosedError' });
      expect(await other.locate('after-close')).toBeUndefined();
      expect(await other.listPaused()).toEqual([]);
      expect((await other.listNodes()).map((n) => n.id)).toEqual(['n1']);
    });
  });
});
