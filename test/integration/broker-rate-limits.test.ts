/**
 * The rate-limit roles of the Broker contract (BrokerRateLimits and the
 * `defer` settlement), over both implementations: a bucket hands out turns
 * spaced by the rate whoever asks, a deferred job waits in the broker and
 * comes back marked with its turn, and a rate set at run time is remembered
 * and spaces again the jobs already waiting.
 */
import { describe, expect, it } from 'vitest';
import type { Broker, Delivery, NewJob, ResultRecord } from '../../dist/broker/types.js';
import { jobStatus } from '../../dist/job-status.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';

const HOUR = 3_600_000;

function job(id: string, extra: Partial<NewJob> = {}): NewJob {
  return {
    id,
    task: 'limited',
    queue: 'q',
    payload: new Uint8Array([0x90]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: Date.now(),
    ...extra,
  };
}

describe.each(['memory', 'redis'] as const)('Broker rate limits over %s', (kind) => {
  const { broker, node } = eachBrokerScope(kind, 'rates');

  async function fetchAll(b: Broker, nodeId: string, count: number): Promise<Delivery[]> {
    return (await b.fetch({ nodeId, plan: [{ queue: 'q', quota: count }], count, settle: [] })).deliveries;
  }

  it('a bucket spaces turns by the interval across callers: one window of 1 h holds one start at 1/h', async () => {
    const a = await broker();
    const b = await broker();
    const [first] = await a.acquireSlots([{ task: 'limited', intervalMs: HOUR, count: 3 }]);
    expect(first).toMatchObject({ intervalMs: HOUR, override: undefined });
    expect(first!.firstDelayMs).toBeLessThanOrEqual(0);
    // The other caller's turn comes after the three already given: three intervals on.
    const [second] = await b.acquireSlots([{ task: 'limited', intervalMs: HOUR, count: 1 }]);
    expect(second!.firstDelayMs).toBeGreaterThan(2 * HOUR);
    // Another task has a bucket of its own.
    const [other] = await b.acquireSlots([{ task: 'other', intervalMs: HOUR, count: 1 }]);
    expect(other!.firstDelayMs).toBeLessThanOrEqual(0);
  });

  it('defer with a slot: the job waits in the delayed set, unstarted and without a retry spent, and comes back marked', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('j1')]);
    const [d] = await fetchAll(b, me, 1);
    await b.settle([{ kind: 'defer', delivery: d!, delay: 30, slot: true }]);
    expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 0, delayed: 1 });
    let back: Delivery[] = [];
    await expect
      .poll(async () => (back = back.length > 0 ? back : await fetchAll(b, me, 1)).length, { timeout: 10_000 })
      .toBe(1);
    expect(back[0]!.job).toMatchObject({ id: 'j1', attempt: 0, redeliveries: 0 });
    expect(back[0]!.job.rateSlot).toBeGreaterThan(0);
    // A retry spends the turn: it asks again.
    await b.settle([{ kind: 'retry', delivery: back[0]!, delay: 0 }]);
    let again: Delivery[] = [];
    await expect
      .poll(async () => (again = again.length > 0 ? again : await fetchAll(b, me, 1)).length, { timeout: 10_000 })
      .toBe(1);
    expect(again[0]!.job).toMatchObject({ id: 'j1', attempt: 1 });
    expect(again[0]!.job.rateSlot).toBeUndefined();
  });

  it('a dead job put back (dead retry) has spent its turn: it comes back unmarked and asks again', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('j1')]);
    const [d] = await fetchAll(b, me, 1);
    // Its turn, at once; then it fails for good.
    await b.settle([{ kind: 'defer', delivery: d!, delay: 0, slot: true }]);
    let back: Delivery[] = [];
    await expect
      .poll(async () => (back = back.length > 0 ? back : await fetchAll(b, me, 1)).length, { timeout: 10_000 })
      .toBe(1);
    expect(back[0]!.job.rateSlot).toBeGreaterThan(0);
    await b.settle([{ kind: 'dead', delivery: back[0]!, reason: 'boom' }]);
    expect(await b.retryDead('q', ['j1'])).toBe(1);
    expect(await b.locate('j1')).toMatchObject({ state: 'waiting' });
    expect((await b.locate('j1'))?.rateLimited).toBeUndefined();
    const [again] = await fetchAll(b, me, 1);
    expect(again!.job).toMatchObject({ id: 'j1', attempt: 0 });
    // Marked, it would start without asking its bucket (within an interval of its old turn: an hour at 1/h).
    expect(again!.job.rateSlot).toBeUndefined();
  });

  it("a turn comes back on this process's clock, keeping how late the job is", async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('j1')]);
    const [d] = await fetchAll(b, me, 1);
    const deferredAt = Date.now();
    await b.settle([{ kind: 'defer', delivery: d!, delay: 0, slot: true }]);
    // Nobody fetches for a while: the job is due, and late when it comes.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const [back] = await fetchAll(b, me, 1);
    const turn = back!.job.rateSlot!;
    expect(turn).toBeGreaterThanOrEqual(deferredAt - 50);
    expect(Date.now() - turn).toBeGreaterThanOrEqual(500);
  });

  it("a job holding its turn is served before the queue's backlog when it comes due", async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('turn')]);
    const [d] = await fetchAll(b, me, 1);
    await b.settle([{ kind: 'defer', delivery: d!, delay: 0, slot: true }]);
    // A backlog enqueued meanwhile: behind it, the turn would pass.
    await b.enqueue([job('b1'), job('b2'), job('b3')]);
    const [first] = await fetchAll(b, me, 1);
    expect(first!.job.id).toBe('turn');
    expect((await fetchAll(b, me, 3)).map((x) => x.job.id)).toEqual(['b1', 'b2', 'b3']);
  });

  it('a job deferred without a turn, and a retry, go behind the backlog as before', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('asks'), job('fails')]);
    const [asks, fails] = await fetchAll(b, me, 2);
    await b.settle([
      { kind: 'defer', delivery: asks!, delay: 0, slot: false },
      { kind: 'retry', delivery: fails!, delay: 0 },
    ]);
    await b.enqueue([job('b1')]);
    const ids: string[] = [];
    await expect
      .poll(async () => ids.push(...(await fetchAll(b, me, 3)).map((x) => x.job.id)) && ids.length, { timeout: 10_000 })
      .toBe(3);
    expect(ids[0]).toBe('b1');
  });

  it('defer without a slot comes back unmarked', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('j1')]);
    const [d] = await fetchAll(b, me, 1);
    await b.settle([{ kind: 'defer', delivery: d!, delay: 0, slot: false }]);
    let back: Delivery[] = [];
    await expect
      .poll(async () => (back = back.length > 0 ? back : await fetchAll(b, me, 1)).length, { timeout: 10_000 })
      .toBe(1);
    expect(back[0]!.job.rateSlot).toBeUndefined();
  });

  it("a rate set at run time wins over the caller's, is remembered, and spaces again the jobs waiting their turn", async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('j1'), job('j2'), job('j3'), job('x', { task: 'unrelated' })]);
    const ds = await fetchAll(b, me, 4);
    expect(ds).toHaveLength(4);
    // Three turns an hour or more away, and a job of another task at the same time.
    await b.settle(ds.map((d, i) => ({ kind: 'defer' as const, delivery: d, delay: (i + 1) * HOUR, slot: true })));
    expect(await b.setRateLimit('limited', 'off')).toBe(3);
    expect(await b.rateLimits()).toEqual(new Map([['limited', 'off']]));
    let back: Delivery[] = [];
    await expect
      .poll(async () => (back = [...back, ...(await fetchAll(b, me, 10))]).length, { timeout: 10_000 })
      .toBe(3);
    expect(back.map((d) => d.job.id).sort()).toEqual(['j1', 'j2', 'j3']);
    expect((await b.counts(['q']))[0]).toMatchObject({ delayed: 1 });
    const [grant] = await b.acquireSlots([{ task: 'limited', intervalMs: HOUR, count: 5 }]);
    expect(grant).toEqual({ firstDelayMs: 0, intervalMs: 0, override: 'off' });

    expect(await b.setRateLimit('limited', '2/h')).toBe(0);
    const [limited] = await (await broker()).acquireSlots([{ task: 'limited', intervalMs: 1, count: 2 }]);
    expect(limited).toMatchObject({ intervalMs: HOUR / 2, override: '2/h' });

    // default: nothing set at run time any more; the caller's interval (the task's own) governs again.
    expect(await b.setRateLimit('limited', 'default')).toBe(0);
    expect(await b.rateLimits()).toEqual(new Map());
    const [own] = await b.acquireSlots([{ task: 'limited', intervalMs: 7, count: 1 }]);
    expect(own).toMatchObject({ intervalMs: 7, override: undefined });
  });

  /** What `handle.state()` says of job `id`: where the broker finds it, then its record. */
  async function stateOf(b: Broker, id: string): Promise<ResultRecord | undefined> {
    return jobStatus(await b.locate(id), await b.getResult(id));
  }

  function byId(ds: readonly Delivery[], id: string): Delivery {
    const d = ds.find((x) => x.job.id === id);
    if (d === undefined) throw new Error(`job ${id} was not fetched`);
    return d;
  }

  it('a deferred job is delayed in the job index until its turn: state() says PENDING with dueAt, never RETRY', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('turn'), job('asks'), job('again')]);
    const first = await fetchAll(b, me, 3);
    // `again` failed once (a RETRY record is stored), came back, and now waits for its rate-limit turn.
    const failed: ResultRecord = { id: 'again', task: 'limited', queue: 'q', state: 'RETRY', retries: 0 };
    await b.settle([{ kind: 'retry', delivery: byId(first, 'again'), delay: 0, result: failed }]);
    let retried: Delivery[] = [];
    await expect
      .poll(async () => (retried = retried.length > 0 ? retried : await fetchAll(b, me, 1)).length, {
        timeout: 10_000,
      })
      .toBe(1);
    const before = Date.now();
    await b.settle([
      { kind: 'defer', delivery: byId(first, 'turn'), delay: HOUR, slot: true },
      { kind: 'defer', delivery: byId(first, 'asks'), delay: HOUR, slot: false },
      { kind: 'defer', delivery: byId(retried, 'again'), delay: 2 * HOUR, slot: true },
    ]);
    const after = Date.now();
    for (const id of ['turn', 'asks']) {
      const where = await b.locate(id);
      expect(where).toMatchObject({ id, state: 'delayed', queue: 'q', attempt: 0, rateLimited: true });
      expect(where?.dueAt).toBeGreaterThanOrEqual(before + HOUR - 1000);
      expect(where?.dueAt).toBeLessThanOrEqual(after + HOUR + 1000);
      const shown = await stateOf(b, id);
      expect(shown).toMatchObject({ id, state: 'PENDING', retries: 0, rateLimited: true, dueAt: where?.dueAt });
    }
    expect(await b.locate('again')).toMatchObject({ state: 'delayed', attempt: 1, rateLimited: true });
    const again = await stateOf(b, 'again');
    // Waiting for a turn is no retry: the failed attempt's RETRY record does not speak for it.
    expect(again).toMatchObject({ state: 'PENDING', retries: 1, rateLimited: true });
    expect(again?.dueAt).toBeGreaterThanOrEqual(before + 2 * HOUR - 1000);
    expect(again?.error).toBeUndefined();
  });

  it('a deferred job promoted when its turn comes is waiting again in the job index, then reserved', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('turn'), job('asks')]);
    const ds = await fetchAll(b, me, 2);
    await b.settle([
      { kind: 'defer', delivery: byId(ds, 'turn'), delay: 0, slot: true },
      { kind: 'defer', delivery: byId(ds, 'asks'), delay: 0, slot: false },
    ]);
    // A fetch of nothing promotes the due jobs and reserves none.
    await expect
      .poll(
        async () => {
          await fetchAll(b, me, 0);
          return [(await b.locate('turn'))?.state, (await b.locate('asks'))?.state];
        },
        { timeout: 10_000 },
      )
      .toEqual(['waiting', 'waiting']);
    for (const id of ['turn', 'asks']) {
      const where = await b.locate(id);
      expect(where?.dueAt).toBeUndefined();
      expect(where?.rateLimited).toBeUndefined();
      expect(await stateOf(b, id)).toMatchObject({ state: 'PENDING', retries: 0 });
      expect((await stateOf(b, id))?.dueAt).toBeUndefined();
    }
    const [next] = await fetchAll(b, me, 1);
    expect(next?.job.id).toBe('turn');
    expect(await b.locate('turn')).toMatchObject({ state: 'reserved', nodeId: me });
  });

  it('a rate set at run time moves the job index entries of the jobs it spaces again', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('j1'), job('j2'), job('j3'), job('asks'), job('x', { task: 'unrelated' })]);
    const ds = await fetchAll(b, me, 5);
    await b.settle([
      { kind: 'defer', delivery: byId(ds, 'j1'), delay: HOUR, slot: true },
      { kind: 'defer', delivery: byId(ds, 'j2'), delay: 2 * HOUR, slot: true },
      { kind: 'defer', delivery: byId(ds, 'j3'), delay: 3 * HOUR, slot: true },
      { kind: 'defer', delivery: byId(ds, 'asks'), delay: 4 * HOUR, slot: false },
      { kind: 'defer', delivery: byId(ds, 'x'), delay: HOUR, slot: true },
    ]);
    const before = Date.now();
    expect(await b.setRateLimit('limited', '1/m')).toBe(4);
    const after = Date.now();
    // In the order of their turns, from now, one a minute; the other task's job stays where it was.
    for (const [i, id] of ['j1', 'j2', 'j3', 'asks'].entries()) {
      const where = await b.locate(id);
      expect(where).toMatchObject({ state: 'delayed', rateLimited: true });
      expect(where?.dueAt).toBeGreaterThanOrEqual(before + i * 60_000 - 1000);
      expect(where?.dueAt).toBeLessThanOrEqual(after + i * 60_000 + 1000);
      expect((await stateOf(b, id))?.dueAt).toBe(where?.dueAt);
    }
    expect((await b.locate('x'))?.dueAt).toBeGreaterThanOrEqual(before + HOUR - 60_000);
    // The index names the new place: the job can be taken out there, and is never fetched.
    expect(await b.removeWaiting('j3')).toMatchObject({ id: 'j3', state: 'delayed' });
    expect(await b.locate('j3')).toBeUndefined();

    expect(await b.setRateLimit('limited', 'off')).toBe(3);
    await expect
      .poll(
        async () => {
          await fetchAll(b, me, 0);
          return Promise.all(['j1', 'j2', 'asks'].map(async (id) => (await b.locate(id))?.state));
        },
        { timeout: 10_000 },
      )
      .toEqual(['waiting', 'waiting', 'waiting']);
    expect((await fetchAll(b, me, 10)).map((d) => d.job.id).sort()).toEqual(['asks', 'j1', 'j2']);
  });

  it('a bad rate set at run time is refused, naming it, and changes nothing', async () => {
    const b = await broker();
    await expect(b.setRateLimit('limited', '5/y')).rejects.toThrow(/rateLimit: "5\/y"/);
    expect(await b.rateLimits()).toEqual(new Map());
  });
});
