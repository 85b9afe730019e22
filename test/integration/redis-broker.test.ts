import { describe, expect, it, vi } from 'vitest';
import { unpack } from 'msgpackr';
import { DEAD_SLICE } from '../../dist/broker/redis/dead-set.js';
import { GROUP } from '../../dist/broker/redis/keys.js';
import type { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import { BrokerRefusedError } from 'prefork';
import { WAIT } from '../helpers/wait.js';
import { fetchFrom, ids, job, registerNode, result, Scope, sleep, eachNode } from './redis-helpers.js';

let scope: Scope;
let broker: RedisBroker;
const NODE = 'node-a';

eachNode(['default', 'high', 'low'], (s, b) => {
  scope = s;
  broker = b;
});

describe('RedisBroker: enqueue, fetch, ack', () => {
  it('removes an acked entry from the stream and the pending list', async () => {
    const j = job('default', { payload: new Uint8Array([0xff, 0x00, 0x80, 0x7f]) });
    await broker.enqueue([j]);
    const reply = await fetchFrom(broker, NODE, ['default'], 10);
    expect(reply.fenced).toBe(false);
    expect(ids(reply.deliveries)).toEqual([j.id]);
    const d = reply.deliveries[0]!;
    expect(d.malformed).toBeUndefined();
    expect(d.queue).toBe('default');
    expect(Array.from(d.job.payload)).toEqual([0xff, 0x00, 0x80, 0x7f]);
    expect(d.job).toMatchObject({ task: 'add', attempt: 0, redeliveries: 0, enqueuedAt: j.enqueuedAt });
    expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 1 });

    await broker.settle([{ kind: 'ack', delivery: d }]);
    expect(await scope.raw.xlen(scope.key('q:default'))).toBe(0);
    const pending = (await scope.raw.xpending(scope.key('q:default'), GROUP)) as [number];
    expect(pending[0]).toBe(0);
    expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 0, delayed: 0, dead: 0 });
  });

  it('enqueues in bulk and fetches jobs enqueued before any consumer existed, in order', async () => {
    const jobs = Array.from({ length: 50 }, (_, i) => job('default', { payload: new Uint8Array([i]) }));
    await broker.enqueue(jobs);
    expect((await broker.counts(['default']))[0]!.waiting).toBe(50);
    expect(await broker.knownQueues()).toEqual(['default', 'high', 'low']);
    const first = await fetchFrom(broker, NODE, ['default'], 30);
    const second = await fetchFrom(broker, NODE, ['default'], 30);
    expect([...ids(first.deliveries), ...ids(second.deliveries)]).toEqual(jobs.map((j) => j.id));
  });

  it('settles and fetches in one call', async () => {
    await broker.enqueue([job('default'), job('default')]);
    const one = await fetchFrom(broker, NODE, ['default'], 1);
    const two = await broker.fetch({
      nodeId: NODE,
      plan: [{ queue: 'default', quota: 1 }],
      count: 1,
      settle: [{ kind: 'ack', delivery: one.deliveries[0]! }],
    });
    expect(two.deliveries).toHaveLength(1);
    expect(await scope.raw.xlen(scope.key('q:default'))).toBe(1);
  });

  it('follows the plan strictly: the first queue fills the batch before the next is touched', async () => {
    const high = [job('high'), job('high')];
    const low = [job('low'), job('low')];
    await broker.enqueue([...low, ...high]);
    const reply = await fetchFrom(
      broker,
      NODE,
      [
        { queue: 'high', quota: 3 },
        { queue: 'low', quota: 0 },
      ],
      3,
    );
    expect(ids(reply.deliveries)).toEqual([high[0]!.id, high[1]!.id, low[0]!.id]);
  });

  it('takes each quota first, then leftovers in plan order', async () => {
    const a = Array.from({ length: 5 }, () => job('high'));
    const b = Array.from({ length: 5 }, () => job('low'));
    await broker.enqueue([...a, ...b]);
    const reply = await fetchFrom(
      broker,
      NODE,
      [
        { queue: 'high', quota: 1 },
        { queue: 'low', quota: 2 },
      ],
      5,
    );
    expect(ids(reply.deliveries)).toEqual([a[0]!.id, b[0]!.id, b[1]!.id, a[1]!.id, a[2]!.id]);
  });

  it('serves given-back jobs first, with redeliveries + 1', async () => {
    const [x, y] = [job('default'), job('default')];
    await broker.enqueue([x, y]);
    const first = await fetchFrom(broker, NODE, ['default'], 1);
    expect(ids(first.deliveries)).toEqual([x.id]);
    await broker.settle([{ kind: 'giveBack', delivery: first.deliveries[0]! }]);
    const again = await fetchFrom(broker, NODE, ['default'], 2);
    expect(ids(again.deliveries)).toEqual([x.id, y.id]);
    expect(again.deliveries[0]!.job.redeliveries).toBe(1);
    expect(again.deliveries[0]!.receipt).not.toBe(first.deliveries[0]!.receipt);
  });

  it('blocks in waitForWork until a job arrives, and returns it reserved', async () => {
    const waiting = broker.waitForWork(NODE, ['default'], 5_000, new AbortController().signal, 5);
    await sleep(100);
    const other = await scope.broker();
    const j = job('default');
    await other.enqueue([j]);
    const reply = await waiting;
    expect(ids(reply.deliveries)).toEqual([j.id]);
    expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 1 });
  });

  it('hands a blocked node its job without confirming the lease when leaseHeld says it surely holds it; otherwise confirms it', async () => {
    const fenced = 'node-fenced';
    await registerNode(broker, fenced, ['default']);
    await broker.unregister(fenced);
    const asked: string[] = [];
    const wait = (held: boolean) =>
      broker.waitForWork(fenced, ['default'], 5_000, new AbortController().signal, 1, () => {
        asked.push(String(held));
        return held;
      });
    // The node's own clock says its lease runs: the job is handed over as it arrives (the script's check would say fenced).
    const trusted = wait(true);
    await sleep(100);
    const j = job('default');
    await (await scope.broker()).enqueue([j]);
    expect(ids((await trusted).deliveries)).toEqual([j.id]);
    // Unsure: the broker confirms, finds the node fenced, and gives the job back.
    const checked = wait(false);
    await sleep(100);
    const k = job('default');
    await (await scope.broker()).enqueue([k]);
    expect((await checked).deliveries).toEqual([]);
    expect(asked).toEqual(['true', 'false']);
    expect(ids((await fetchFrom(broker, NODE, ['default'], 5)).deliveries)).toEqual([k.id]);
  });

  it('ends waitForWork on abort without losing what was already reserved', async () => {
    const controller = new AbortController();
    const waiting = broker.waitForWork(NODE, ['default'], 8_000, controller.signal, 1);
    await sleep(100);
    controller.abort();
    const reply = await waiting;
    expect(reply.deliveries).toEqual([]);
    // The connection is still usable and nothing was reserved behind our back.
    const j = job('default');
    await broker.enqueue([j]);
    expect(ids((await fetchFrom(broker, NODE, ['default'], 5)).deliveries)).toEqual([j.id]);
  });

  it('caps waitForWork at count and leaves the rest available', async () => {
    const jobs = [job('high'), job('low'), job('low')];
    await broker.enqueue(jobs);
    const reply = await broker.waitForWork(NODE, ['high', 'low'], 1_000, new AbortController().signal, 1);
    expect(reply.deliveries).toHaveLength(1);
    const rest = await fetchFrom(broker, NODE, ['high', 'low'], 10);
    expect(new Set([...ids(reply.deliveries), ...ids(rest.deliveries)])).toEqual(new Set(jobs.map((j) => j.id)));
    expect(rest.deliveries.every((d) => d.job.redeliveries === 0)).toBe(true);
  });
});

describe('RedisBroker: delayed jobs', () => {
  it('does not deliver a delayed job early, and delivers delayed jobs in due order', async () => {
    const late = job('default', { delay: 600 });
    const early = job('default', { delay: 300 });
    await broker.enqueue([late, early]);
    const now = await fetchFrom(broker, NODE, ['default'], 10);
    expect(now.deliveries).toEqual([]);
    expect(now.nextDueAt).toBeDefined();
    expect((await broker.counts(['default']))[0]!.delayed).toBe(2);
    const got: string[] = [];
    await vi.waitFor(async () => {
      got.push(...ids((await fetchFrom(broker, NODE, ['default'], 10)).deliveries));
      expect(got).toHaveLength(2);
    }, WAIT);
    expect(got).toEqual([early.id, late.id]);
  });

  it('honours eta (epoch ms) and runs a job already due at once', async () => {
    const past = job('default', { eta: Date.now() - 1_000 });
    const future = job('default', { eta: Date.now() + 60_000 });
    await broker.enqueue([past, future]);
    const before = Date.now();
    const reply = await fetchFrom(broker, NODE, ['default'], 10);
    const after = Date.now();
    expect(ids(reply.deliveries)).toEqual([past.id]);
    // Converted from Redis's clock by the difference: the eta, give or take the round trip (and a ms of rounding).
    expect(reply.nextDueAt).toBeGreaterThanOrEqual(future.eta! - 1);
    expect(reply.nextDueAt).toBeLessThanOrEqual(future.eta! + (after - before) + 1);
  });

  it('wakes a node blocked in waitForWork when a delayed job becomes the earliest, and delivers it there', async () => {
    const waiting = broker.waitForWork(NODE, ['default'], 8_000, new AbortController().signal, 1);
    await sleep(100);
    const producer = await scope.broker();
    const j = job('default', { delay: 200 });
    await producer.enqueue([j]);
    // No other fetch anywhere: the blocked call itself is woken by the timer marker and takes the job when due.
    const woke = await waiting;
    expect(ids(woke.deliveries)).toEqual([j.id]);
    expect(woke.deliveries[0]!.job.task).toBe('add');
    // The marker was consumed, never handed out as a job; the job is reserved.
    expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 1, delayed: 0 });
  });

  it('when the delayed job a blocked wait was woken for goes elsewhere, the wait ends when the next one is due (no marker announces that one)', async () => {
    const first = job('default', { delay: 1_000 });
    const second = job('default', { delay: 2_000 });
    await (await scope.broker()).enqueue([first, second]);
    // The first job's marker wakes this wait at once; it then waits for the first job's due time.
    const waiting = broker.waitForWork(NODE, ['default'], 60_000, new AbortController().signal, 1);
    await sleep(100);
    // Another node's fetch takes the first job off the delayed set before this one gets to it.
    await scope.raw.zpopmin(scope.key('delayed:default'));
    const woke = await waiting;
    const got =
      woke.deliveries.length > 0 ? woke.deliveries : (await fetchFrom(broker, NODE, ['default'], 5)).deliveries;
    expect(ids(got)).toEqual([second.id]);
  });

  it('returns the due time from waitForWork when the delayed job is due after its timeout', async () => {
    const waiting = broker.waitForWork(NODE, ['default'], 300, new AbortController().signal, 1);
    await sleep(50);
    const j = job('default', { delay: 60_000 });
    await (await scope.broker()).enqueue([j]);
    const woke = await waiting;
    expect(woke.deliveries).toEqual([]);
    expect(woke.nextDueAt).toBeGreaterThan(Date.now() + 50_000);
  });

  it('a retry settlement puts the job back delayed with attempt + 1', async () => {
    const j = job('default', { options: { retries: 3 } });
    await broker.enqueue([j]);
    const d = (await fetchFrom(broker, NODE, ['default'], 1)).deliveries[0]!;
    await broker.settle([{ kind: 'retry', delivery: d, delay: 150, result: result(d, 'RETRY') }]);
    expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 0, delayed: 1 });
    const again = await vi.waitFor(async () => {
      const [delivery] = (await fetchFrom(broker, NODE, ['default'], 1)).deliveries;
      if (delivery === undefined) throw new Error('the retried job is not due yet');
      return delivery;
    }, WAIT);
    expect(again.job).toMatchObject({ id: j.id, attempt: 1, redeliveries: 0, options: { retries: 3 } });
    expect((await broker.getResult(j.id))?.state).toBe('RETRY');
  });
});

describe('RedisBroker: dead letters and malformed entries', () => {
  it('dead settlement → listDead, retryDead, purgeDead', async () => {
    const [x, y] = [job('default'), job('default')];
    await broker.enqueue([x, y]);
    const ds = (await fetchFrom(broker, NODE, ['default'], 2)).deliveries;
    await broker.settle(ds.map((d) => ({ kind: 'dead' as const, delivery: d, reason: `no luck ${d.job.id}` })));
    const dead = await broker.listDead('default', 10);
    expect(dead.map((d) => d.job.id).sort()).toEqual([x.id, y.id].sort());
    expect(dead.find((d) => d.job.id === x.id)!.reason).toBe(`no luck ${x.id}`);
    expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 0, dead: 2 });

    expect(await broker.retryDead('default', [x.id])).toBe(1);
    const back = await fetchFrom(broker, NODE, ['default'], 5);
    expect(ids(back.deliveries)).toEqual([x.id]);
    expect(back.deliveries[0]!.job).toMatchObject({ attempt: 0, redeliveries: 0 });
    expect(await broker.purgeDead('default')).toBe(1);
    expect(await broker.listDead('default', 10)).toEqual([]);
  });

  it('trims the dead stream to deadMax', async () => {
    const small = await scope.broker({ deadMax: 2 });
    await small.enqueue([job('default'), job('default'), job('default')]);
    const ds = (await fetchFrom(small, NODE, ['default'], 3)).deliveries;
    await small.settle(ds.map((d) => ({ kind: 'dead' as const, delivery: d, reason: 'x' })));
    expect(await scope.raw.xlen(scope.key('dead:default'))).toBe(2);
  });

  it('turns a garbage entry into a malformed delivery, which then goes dead', async () => {
    await scope.raw.xadd(scope.key('q:default'), '*', 'hello', 'world');
    await scope.raw.xadd(scope.key('q:default'), '*', 'task', 'add', 'meta', '{not json');
    const reply = await fetchFrom(broker, NODE, ['default'], 10);
    expect(reply.deliveries).toHaveLength(2);
    const [a, b] = reply.deliveries as [(typeof reply.deliveries)[0] & object, (typeof reply.deliveries)[0] & object];
    expect(a.malformed).toMatch(/no task name/);
    expect(a.job.id).toBe(a.receipt.slice(2));
    expect(b.malformed).toMatch(/no payload/);
    expect(b.job.task).toBe('add');
    await broker.settle([a, b].map((d) => ({ kind: 'dead' as const, delivery: d, reason: d.malformed! })));
    const dead = await broker.listDead('default', 10);
    expect(dead).toHaveLength(2);
    expect(await scope.raw.xlen(scope.key('q:default'))).toBe(0);
    expect((await fetchFrom(broker, NODE, ['default'], 10)).deliveries).toEqual([]);
  });

  it('an entry whose options or workflow place the Client would refuse is a malformed delivery naming the field, with no workflow; its dead settlement lands', async () => {
    const cases: [meta: object, named: RegExp][] = [
      [{ w: ['wf-x', -1, []] }, /workflow reference has a node -1 that is not an integer >= 0/],
      [{ w: ['wf-x', 0, []] }, /workflow reference has queues \[\] that are not a non-empty list/],
      [{ w: ['', 0, ['default']] }, /workflow reference has an id "" that is not a non-empty string/],
      [{ w: ['wf-x', 0, ['a{b}']] }, /workflow reference has a queue "a\{b\}" that is not a queue name/],
      [{ w: 'wf-x' }, /workflow reference "wf-x" is not \[id, node, queues\]/],
      [{ o: { retries: 'x' } }, /invalid option retries: "x"/],
      [{ o: { retries: -1 } }, /invalid option retries: -1/],
      [{ o: { retries: 1e300 } }, /invalid option retries: 1e\+300/],
      [{ o: { ignoreResult: 'yes' } }, /invalid option ignoreResult: "yes"/],
      [{ o: { timeLimit: '5s' } }, /invalid option timeLimit: "5s" \(expected a number of ms/],
      [{ o: { backoff: null } }, /invalid option backoff: null/],
      [{ o: { backoff: { delay: '1s' } } }, /invalid option backoff.delay: "1s"/],
      [{ o: [1, 2] }, /invalid option options: \[1,2\] \(expected an object\)/],
      [{ o: null }, /invalid option options: null/],
    ];
    const fields = (i: number, meta: object): string[] => [
      'id',
      `bad-${i}`,
      'task',
      'add',
      'payload',
      'x',
      'attempt',
      '0',
      'redeliveries',
      '0',
      'meta',
      JSON.stringify(meta),
    ];
    for (const [i, [meta]] of cases.entries()) await scope.raw.xadd(scope.key('q:default'), '*', ...fields(i, meta));
    // Options of a newer producer are ignored, deliberately: the job is read.
    const newer = job('default', { options: { retries: 2, priority: 'high' } as never });
    await broker.enqueue([newer]);
    const { deliveries } = await fetchFrom(broker, NODE, ['default'], 50);
    expect(deliveries.map((d) => d.job.id)).toEqual([...cases.map((_, i) => `bad-${i}`), newer.id]);
    cases.forEach(([, named], i) => {
      const d = deliveries[i]!;
      expect(d.malformed, d.job.id).toMatch(named);
      expect(d.job.workflow).toBeUndefined();
      expect(d.job.options).toEqual({});
    });
    const read = deliveries[cases.length]!;
    expect(read.malformed).toBeUndefined();
    expect(read.job.options).toEqual({ retries: 2, priority: 'high' });
    const bad = deliveries.slice(0, cases.length);
    await broker.settle(bad.map((d) => ({ kind: 'dead' as const, delivery: d, reason: d.malformed! })));
    await broker.settle([{ kind: 'ack', delivery: read }]);
    expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 0, dead: cases.length });
  });

  it('changeDead takes an entry id for a job id; a job both name counts for the one given first', async () => {
    const dead = scope.key('dead:default');
    const x = job('default');
    await broker.enqueue([x]);
    const ds = (await fetchFrom(broker, NODE, ['default'], 1)).deliveries;
    await broker.settle(ds.map((d) => ({ kind: 'dead' as const, delivery: d, reason: 'x' })));
    const [[entry]] = (await scope.raw.xrange(dead, '-', '+')) as [[string, string[]]];
    // Asked by both ids, one at a time the first would move it and the second find nothing.
    expect(await broker.changeDead('default', 'delete', [entry, x.id, 'nope'])).toEqual({
      count: 1,
      moved: [entry],
      inWorkflow: [],
      inUse: [],
    });
    const body = ['task', 'add', 'payload', 'x', 'attempt', '2', 'redeliveries', '0', 'reason', 'x'];
    const noId = await scope.raw.xadd(dead, '*', ...body, 'meta', '{}');
    const flow = '{"w":["wf-9",0,["default"]]}';
    const member = await scope.raw.xadd(dead, '*', 'id', 'm-1', ...body, 'meta', flow);
    const memberNoId = await scope.raw.xadd(dead, '*', ...body, 'meta', flow);
    // A workflow's job is named by the id a listing shows (its entry's when it has none), not by another.
    expect(await broker.changeDead('default', 'retry', [x.id, member as string, memberNoId as string])).toEqual({
      count: 0,
      moved: [],
      inWorkflow: [{ id: memberNoId, workflow: 'wf-9' }],
      inUse: [],
    });
    expect(await broker.changeDead('default', 'retry', ['m-1'])).toEqual({
      count: 0,
      moved: [],
      inWorkflow: [{ id: 'm-1', workflow: 'wf-9' }],
      inUse: [],
    });
    expect(await broker.changeDead('default', 'retry', [x.id, noId as string])).toEqual({
      count: 1,
      moved: [noId],
      inWorkflow: [],
      inUse: [],
    });
    expect((await fetchFrom(broker, NODE, ['default'], 5)).deliveries.map((d) => d.job.attempt)).toEqual([0]);
    expect(await broker.changeDead('default', 'delete', [memberNoId as string, 'm-1'])).toEqual({
      count: 2,
      moved: [memberNoId, 'm-1'],
      inWorkflow: [],
      inUse: [],
    });
    expect(await scope.raw.xlen(dead)).toBe(0);
  });

  it('walks a large dead set a slice per script, so Redis serves others between the slices', async () => {
    const dead = scope.key('dead:default');
    const size = 2 * DEAD_SLICE + 500;
    const body = ['task', 'add', 'payload', 'x', 'attempt', '2', 'redeliveries', '0', 'meta', '{}', 'reason', 'x'];
    const fill = scope.raw.pipeline();
    for (let i = 0; i < size; i++) fill.xadd(dead, '*', 'id', `d-${i}`, ...body);
    await fill.exec();
    // The scripts called on this dead set, as Redis received them (not the commands they ran).
    const monitor = await scope.raw.monitor();
    const calls: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua' && /^eval/i.test(args[0] ?? '') && args.includes(dead)) calls.push(args);
    });
    const scriptsOf = async (change: () => Promise<unknown>): Promise<number> => {
      const before = calls.length;
      const marker = `done-${before}`;
      let seen = false;
      monitor.on('monitor', (_time: string, args: string[]) => {
        if (args[1] === marker) seen = true;
      });
      await change();
      await scope.raw.echo(marker);
      await vi.waitFor(() => expect(seen).toBe(true), WAIT);
      return calls.length - before;
    };
    try {
      let listed: unknown;
      const byId = await scriptsOf(async () => {
        listed = await broker.changeDead('default', 'retry', [`d-${size - 1}`, 'd-0', 'nope']);
      });
      expect(listed).toEqual({ count: 2, moved: [`d-${size - 1}`, 'd-0'], inWorkflow: [], inUse: [] });
      expect(byId).toBeGreaterThan(2);
      let all: unknown;
      const every = await scriptsOf(async () => {
        all = await broker.changeDead('default', 'retry', undefined);
      });
      expect(all).toEqual({ count: size - 2, moved: [], inWorkflow: [], inUse: [] });
      expect(every).toBeGreaterThan(2);
    } finally {
      monitor.disconnect();
    }
    expect(await scope.raw.xlen(dead)).toBe(0);
    // Requeued as asked: the ids listed in their order, then every other one oldest first.
    const requeued = (await scope.raw.xrange(scope.key('q:default'), '-', '+')).map(([, f]) => f[f.indexOf('id') + 1]);
    expect(requeued).toEqual([`d-${size - 1}`, 'd-0', ...Array.from({ length: size - 2 }, (_, i) => `d-${i + 1}`)]);
  });
});

describe('RedisBroker: results', () => {
  it('stores a result with a TTL and wakes the client waiting for it', async () => {
    const j = job('default', { replyTo: 'client-1' });
    await broker.enqueue([j]);
    const d = (await fetchFrom(broker, NODE, ['default'], 1)).deliveries[0]!;
    const client = await scope.broker({ resultTtl: 60_000 });
    const waiting = client.waitForResults('client-1', 5_000);
    await sleep(100);
    await broker.settle([{ kind: 'ack', delivery: d, result: result(d, 'SUCCESS', { sum: 3 }) }]);
    const got = (await waiting).records;
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ id: j.id, state: 'SUCCESS', value: { sum: 3 } });
    expect(await broker.getResult(j.id)).toMatchObject({ id: j.id, state: 'SUCCESS' });
    const ttl = await scope.raw.pttl(`${scope.ns}:res:${j.id}`);
    expect(ttl).toBeGreaterThan(0);
    expect(unpack((await scope.raw.getBuffer(`${scope.ns}:res:${j.id}`)) as Buffer)).toMatchObject({
      state: 'SUCCESS',
    });
  });

  it('announces only final states; progress writes only the result', async () => {
    const j = job('default', { replyTo: 'client-2' });
    await broker.enqueue([j]);
    const d = (await fetchFrom(broker, NODE, ['default'], 1)).deliveries[0]!;
    await broker.settle([{ kind: 'progress', delivery: d, result: result(d, 'STARTED') }]);
    expect((await broker.getResult(j.id))?.state).toBe('STARTED');
    expect((await broker.waitForResults('client-2', 50)).records).toEqual([]);
    expect((await broker.counts(['default']))[0]!.reserved).toBe(1);
  });

  it('writes no key for an ignoreResult job', async () => {
    const j = job('default', { options: { ignoreResult: true } });
    await broker.enqueue([j]);
    const d = (await fetchFrom(broker, NODE, ['default'], 1)).deliveries[0]!;
    await broker.settle([{ kind: 'ack', delivery: d }]);
    expect(await broker.getResult(j.id)).toBeUndefined();
    expect(await scope.raw.exists(`${scope.ns}:res:${j.id}`)).toBe(0);
  });

  it('a reply list keeps the newest 10,000 ids: a client that enqueues and never waits costs a bounded list', async () => {
    // Settlements of receipts nobody holds move no job but still write and announce their results.
    const settle = Array.from({ length: 10_050 }, (_, i) => {
      const d = { receipt: 'q:0-1', queue: 'default', job: job('default', { id: `r${i}`, replyTo: 'quiet-client' }) };
      return { kind: 'ack' as const, delivery: d, result: result(d, 'SUCCESS', i) };
    });
    await broker.settle(settle);
    const key = `${scope.ns}:reply:quiet-client`;
    expect(await scope.raw.llen(key)).toBe(10_000);
    expect(await scope.raw.lindex(key, -1)).toBe('r50');
    expect(await scope.raw.pttl(key)).toBeGreaterThan(0);
  });

  it('waitForResults returns nothing when nothing arrives', async () => {
    expect((await broker.waitForResults('nobody', 100)).records).toEqual([]);
  });
});

describe('RedisBroker: admin', () => {
  it('purge drops waiting and delayed jobs but leaves reserved ones', async () => {
    await broker.enqueue([job('default'), job('default'), job('default'), job('default', { delay: 60_000 })]);
    const d = (await fetchFrom(broker, NODE, ['default'], 1)).deliveries[0]!;
    expect(await broker.purge('default')).toBe(3);
    expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 1, delayed: 0 });
    await broker.settle([{ kind: 'ack', delivery: d }]);
    expect(await scope.raw.xlen(scope.key('q:default'))).toBe(0);
  });

  it('masks the password in displayUrl', async () => {
    const { RedisBroker } = await import('../../dist/broker/redis/redis-broker.js');
    expect(new RedisBroker('redis://user:s3cret@localhost:6379/2').displayUrl).toBe(
      'redis://user:***@localhost:6379/2',
    );
  });
});

describe('RedisBroker: a key another program wrote over', () => {
  /** The error `p` rejects with. */
  async function rejectionOf(p: Promise<unknown>): Promise<Error> {
    try {
      await p;
    } catch (err) {
      return err as Error;
    }
    throw new Error('it resolved');
  }

  it('a fetch is refused for good (BrokerRefusedError) naming the key, and the error carries no script source', async () => {
    await scope.raw.set(scope.key('q:high'), 'garbage');
    const err = await rejectionOf(fetchFrom(broker, NODE, ['default', 'high'], 5));
    expect(err).toBeInstanceOf(BrokerRefusedError);
    expect(err.message).toMatch(/^Redis refused the fetch: WRONGTYPE .*\(\{t\w+\}:q:high is a string, not a stream\)$/);
    // ioredis attaches the command to its error: cut to its name and its first arguments, the script named.
    const command = (err.cause as { command?: { name: string; args: unknown[] } }).command;
    expect(command?.args[0]).toBe('<script fetchJobs>');
    expect(JSON.stringify(command).length).toBeLessThan(2_000);
  });

  it('a blocking wait is refused the same way', async () => {
    await scope.raw.set(scope.key('q:low'), 'garbage');
    const err = await rejectionOf(broker.waitForWork(NODE, ['default', 'low'], 1_000, new AbortController().signal));
    expect(err).toBeInstanceOf(BrokerRefusedError);
    expect(err.message).toContain(`${scope.key('q:low')} is a string, not a stream`);
  });

  it('a queue deleted under a blocking wait is no refusal: the wait fails as if Redis were away, and the next one works', async () => {
    const waiting = rejectionOf(broker.waitForWork(NODE, ['default'], 10_000, new AbortController().signal));
    await sleep(100); // let the wait block first
    await scope.raw.del(scope.key('q:default'));
    const err = await waiting;
    expect(err).not.toBeInstanceOf(BrokerRefusedError);
    expect(err.message).toMatch(/UNBLOCKED/);
    await broker.enqueue([job('default')]);
    const reply = await broker.waitForWork(NODE, ['default'], 10_000, new AbortController().signal);
    expect(reply.deliveries).toHaveLength(1);
  });

  it('a heartbeat too', async () => {
    await scope.raw.del(scope.key('nodes'));
    await scope.raw.set(scope.key('nodes'), 'garbage');
    const err = await rejectionOf(broker.heartbeat(NODE, ['default']));
    expect(err).toBeInstanceOf(BrokerRefusedError);
    expect(err.message).toContain(`${scope.key('nodes')} is a string, not a zset`);
  });
});
