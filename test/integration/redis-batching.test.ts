/**
 * The Redis broker's batched hot paths: bulk enqueue through the script,
 * plain acks acked and deleted per stream in bulk (several streams, more ids
 * than one XACK chunk), a fenced node's batched late acks, result
 * announcements grouped per reply list, and positional entry decoding.
 */
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { GROUP } from '../../dist/broker/redis/keys.js';
import { MIN_LEASE_MS } from '../../dist/broker/broker-options.js';
import { EVENTS_PER_WRITE, EventBuffer } from '../../dist/events/event-buffer.js';
import type { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import type { Delivery, Settlement } from '../../dist/broker/types.js';
import type { NodeEvent } from 'prefork';
import { fetchFrom, ids, job, registerNode, result, Scope, sleep, eachNode } from './redis-helpers.js';

const silentLog = pino({ level: 'silent' });
let scope: Scope;
let broker: RedisBroker;
const NODE = 'node-a';

eachNode(['x', 'y', 'z'], (s, b) => {
  scope = s;
  broker = b;
});

async function pending(stream: string): Promise<number> {
  return ((await scope.raw.xpending(scope.key(stream), GROUP)) as [number])[0];
}

describe('RedisBroker: bulk enqueue', () => {
  it('adds the same entries as one XADD per job, in order, across chunks, queues and delayed jobs in between', async () => {
    const single = job('x', { payload: new Uint8Array([7, 0, 255]) });
    await broker.enqueue([single]);
    const bulk = Array.from({ length: 2_500 }, (_, i) => job('x', { payload: new Uint8Array([i & 0xff, i >> 8]) }));
    const other = Array.from({ length: 20 }, () => job('y'));
    const later = job('x', { delay: 60_000 });
    // A run for x, a run for y, a delayed job, then the rest of x.
    await broker.enqueue([...bulk.slice(0, 1_200), ...other, later, ...bulk.slice(1_200)]);

    const entries = await scope.raw.xrangeBuffer(scope.key('q:x'), '-', '+');
    // 2,501 jobs and the delayed job's timer marker.
    expect(entries).toHaveLength(2_502);
    // The fields of a bulk entry are laid out exactly as a single XADD's.
    const names = (fields: Buffer[]): string[] => fields.filter((_, i) => i % 2 === 0).map(String);
    expect(names(entries[1]![1])).toEqual(names(entries[0]![1]));
    expect(await scope.raw.xlen(scope.key('q:y'))).toBe(20);
    expect((await broker.counts(['x']))[0]).toMatchObject({ delayed: 1 });

    const got = await fetchFrom(broker, NODE, ['x'], 3_000);
    expect(ids(got.deliveries)).toEqual([single.id, ...bulk.map((j) => j.id)]);
    expect(got.deliveries.every((d) => d.malformed === undefined)).toBe(true);
    expect(Array.from(got.deliveries[1_500]!.job.payload)).toEqual([1_499 & 0xff, 1_499 >> 8]);
    expect(Array.from(got.deliveries[0]!.job.payload)).toEqual([7, 0, 255]);
  });

  it('carries any bytes and sizes through the packed bulk argument (non-ASCII text, empty, 300 B and 70 kB payloads)', async () => {
    const big = new Uint8Array(70_000).map((_, i) => (i * 7) & 0xff);
    const mid = new Uint8Array(300).fill(0xc4);
    const jobs = [
      job('x', { id: 'jöb-☃-1', task: 'tâche', payload: new Uint8Array(0) }),
      job('x', { payload: mid, options: { retries: 2, timeLimit: 5_000 } }),
      job('x', { payload: big, replyTo: 'client-ü' }),
      ...Array.from({ length: 20 }, () => job('x')),
    ];
    await broker.enqueue(jobs);
    const got = await fetchFrom(broker, NODE, ['x'], 50);
    expect(got.deliveries.map((d) => d.job)).toEqual(
      jobs.map((j): unknown =>
        expect.objectContaining({
          id: j.id,
          task: j.task,
          options: j.options,
          attempt: 0,
          redeliveries: 0,
          enqueuedAt: j.enqueuedAt,
        }),
      ),
    );
    expect(got.deliveries[0]!.job.payload).toHaveLength(0);
    expect(Buffer.from(got.deliveries[1]!.job.payload).equals(Buffer.from(mid))).toBe(true);
    expect(Buffer.from(got.deliveries[2]!.job.payload).equals(Buffer.from(big))).toBe(true);
    expect(got.deliveries[2]!.job.replyTo).toBe('client-ü');
  });
});

describe('RedisBroker: batched settlements', () => {
  it('acks and deletes many entries across several streams (main and :rd) in one call, retries and dead letters alongside', async () => {
    const jobs = [
      ...Array.from({ length: 30 }, () => job('x')),
      ...Array.from({ length: 30 }, () => job('y')),
      ...Array.from({ length: 5 }, () => job('z')),
    ];
    await broker.enqueue(jobs);
    const first = await fetchFrom(broker, NODE, ['x', 'y', 'z'], 100);
    expect(first.deliveries).toHaveLength(65);
    // Give back a few of x so they come again from x's :rd stream.
    const back = first.deliveries.filter((d) => d.queue === 'x').slice(0, 4);
    await broker.settle(back.map((delivery) => ({ kind: 'giveBack' as const, delivery })));
    const again = await fetchFrom(broker, NODE, ['x'], 10);
    expect(ids(again.deliveries)).toEqual(ids(back));
    expect(again.deliveries.every((d) => d.receipt.startsWith('r:'))).toBe(true);

    const held: Delivery[] = [...first.deliveries.filter((d) => !back.includes(d)), ...again.deliveries];
    const retried = held.find((d) => d.queue === 'y')!;
    const dead = held.find((d) => d.queue === 'z')!;
    const batch: Settlement[] = held.map((delivery) => {
      if (delivery === retried) return { kind: 'retry', delivery, delay: 60_000, result: result(delivery, 'RETRY') };
      if (delivery === dead) return { kind: 'dead', delivery, reason: 'boom', result: result(delivery, 'FAILURE') };
      return { kind: 'ack', delivery };
    });
    await broker.settle(batch);

    for (const key of ['q:x', 'rd:x', 'q:y', 'q:z']) expect(await pending(key)).toBe(0);
    expect(await scope.raw.xlen(scope.key('q:x'))).toBe(0);
    expect(await scope.raw.xlen(scope.key('rd:x'))).toBe(0);
    expect(await scope.raw.xlen(scope.key('q:z'))).toBe(0);
    // y keeps only the retry's timer marker (the retried job became the earliest delayed one).
    expect(await scope.raw.xlen(scope.key('q:y'))).toBeLessThanOrEqual(1);
    expect(await broker.counts(['x', 'y', 'z'])).toEqual([
      { queue: 'x', waiting: 0, reserved: 0, delayed: 0, dead: 0 },
      { queue: 'y', waiting: 0, reserved: 0, delayed: 1, dead: 0 },
      { queue: 'z', waiting: 0, reserved: 0, delayed: 0, dead: 1 },
    ]);
  });

  it('acks more entries of one stream than fit in one XACK chunk', async () => {
    const jobs = Array.from({ length: 9_001 }, () => job('x'));
    await broker.enqueue(jobs);
    const got = await fetchFrom(broker, NODE, ['x'], 9_001);
    expect(got.deliveries).toHaveLength(9_001);
    await broker.settle(got.deliveries.map((delivery) => ({ kind: 'ack' as const, delivery })));
    expect(await pending('q:x')).toBe(0);
    expect(await scope.raw.xlen(scope.key('q:x'))).toBe(0);
  });

  it('settles a batch carried by a fetch and reserves the next jobs in the same call', async () => {
    await broker.enqueue(Array.from({ length: 6 }, () => job('x')));
    const one = await fetchFrom(broker, NODE, ['x'], 3);
    const two = await broker.fetch({
      nodeId: NODE,
      plan: [{ queue: 'x', quota: 3 }],
      count: 3,
      settle: one.deliveries.map((delivery) => ({ kind: 'ack' as const, delivery })),
    });
    expect(two.deliveries).toHaveLength(3);
    expect(await pending('q:x')).toBe(3);
    expect(await scope.raw.xlen(scope.key('q:x'))).toBe(3);
  });

  /** A job-received event as a node writes it (the fields its type always carries: read back, one without them is skipped). */
  const received = (i: number): NodeEvent => ({
    type: 'job-received',
    at: i,
    node: NODE,
    jobId: `j${i}`,
    task: 't',
    queue: 'x',
    attempt: 0,
  });

  it('carries every event the node holds with its fetch, an entry per EVENTS_PER_WRITE', async () => {
    // A node whose fetches bring many jobs makes more events between two writes than one entry holds.
    const events = new EventBuffer(NODE, () => Promise.reject(new Error('no write of their own here')), silentLog);
    const n = EVENTS_PER_WRITE * 3 + 10;
    for (let i = 0; i < n; i++) events.push(received(i));
    broker.carryEvents(events);
    await fetchFrom(broker, NODE, ['x'], 1);
    expect(await scope.raw.xlen(scope.key('events'))).toBe(4);
    const page = await broker.recentEvents(n);
    expect(page.events.map((e) => e.jobId)).toEqual(Array.from({ length: n }, (_, i) => `j${i}`));
    events.close();
  });

  it('a failed event write fails no fetch: its events are held and written again, in order, once', async () => {
    await broker.enqueue([job('x')]);
    // Another program wrote a plain string where the events stream should be: every XADD fails with WRONGTYPE.
    await scope.raw.set(scope.key('events'), 'not a stream');
    const events = new EventBuffer(NODE, (batch) => broker.publishEvents(batch), silentLog);
    const n = EVENTS_PER_WRITE * 2 + 10;
    for (let i = 0; i < n; i++) events.push(received(i));
    broker.carryEvents(events);
    const got = await fetchFrom(broker, NODE, ['x'], 1);
    expect(got.deliveries).toHaveLength(1);
    await scope.raw.del(scope.key('events'));
    events.push(received(n));
    // The buffer tries again on its own (its flush timer), the oldest first.
    await expect.poll(async () => (await broker.recentEvents(n + 10)).events.length, { timeout: 10_000 }).toBe(n + 1);
    const page = await broker.recentEvents(n + 10);
    expect(page.events.map((e) => e.jobId)).toEqual(Array.from({ length: n + 1 }, (_, i) => `j${i}`));
    events.close();
  });

  it("a fenced node's batched late acks across several streams change nothing", async () => {
    const b = await scope.broker({ leaseMs: MIN_LEASE_MS });
    await registerNode(b, 'old', ['x', 'y']);
    await b.enqueue([...Array.from({ length: 10 }, () => job('x')), ...Array.from({ length: 10 }, () => job('y'))]);
    const held = await fetchFrom(b, 'old', ['x', 'y'], 20);
    expect(held.deliveries).toHaveLength(20);
    await sleep(MIN_LEASE_MS + 150);
    await registerNode(b, 'new', ['x', 'y']);
    expect(await b.recover('old', 'new', 5)).toBe(20);
    const taken = await fetchFrom(b, 'new', ['x', 'y'], 20);
    expect(taken.deliveries).toHaveLength(20);
    const before = await b.counts(['x', 'y']);

    await b.settle(held.deliveries.map((delivery) => ({ kind: 'ack' as const, delivery })));
    expect(await b.counts(['x', 'y'])).toEqual(before);
    expect(await pending('rd:x')).toBe(10);
    expect(await pending('rd:y')).toBe(10);
    expect(await scope.raw.xlen(scope.key('rd:x'))).toBe(10);
    expect(await scope.raw.xlen(scope.key('rd:y'))).toBe(10);
  });
});

describe('RedisBroker: results of a batch', () => {
  it('announces every final result to its own client, grouped per reply list, and stores progress records too', async () => {
    const mine = Array.from({ length: 5 }, () => job('x', { replyTo: 'client-1' }));
    const theirs = Array.from({ length: 3 }, () => job('x', { replyTo: 'client-2' }));
    const silent = job('x', { options: { ignoreResult: true }, replyTo: 'client-1' });
    await broker.enqueue([...mine, ...theirs, silent]);
    const got = await fetchFrom(broker, NODE, ['x'], 20);
    const batch: Settlement[] = [];
    for (const d of got.deliveries) {
      batch.push({ kind: 'progress', delivery: d, result: result(d, 'STARTED') });
      batch.push({ kind: 'ack', delivery: d, result: result(d, 'SUCCESS', d.job.id) });
    }
    await broker.settle(batch);
    expect(await scope.raw.llen(`${scope.ns}:reply:client-1`)).toBe(5);
    expect(await scope.raw.pttl(`${scope.ns}:reply:client-1`)).toBeGreaterThan(0);

    const one = (await broker.waitForResults('client-1', 2_000)).records;
    expect(one.map((r) => r.id)).toEqual(mine.map((j) => j.id));
    expect(one.every((r) => r.state === 'SUCCESS')).toBe(true);
    const two = (await broker.waitForResults('client-2', 2_000)).records;
    expect(two.map((r) => r.id)).toEqual(theirs.map((j) => j.id));
    expect(await broker.getResult(silent.id)).toBeUndefined();
  });

  it('a small final result rides in its announcement; a large one, or one for a client that reads ids only, is read back', async () => {
    const jobs = Array.from({ length: 3 }, () => job('x', { replyTo: 'client-3' }));
    await broker.enqueue(jobs);
    const got = await fetchFrom(broker, NODE, ['x'], 10);
    expect(got.deliveries.every((d) => d.job.replyInline === true)).toBe(true);
    // As a job enqueued by a client that reads ids only (an older one) comes to the node.
    delete got.deliveries[1]!.job.replyInline;
    const values = ['small', 'small', 'x'.repeat(5_000)];
    await broker.settle(
      got.deliveries.map((d, i) => ({ kind: 'ack', delivery: d, result: result(d, 'SUCCESS', values[i]) })),
    );
    const announced = (await scope.raw.lrangeBuffer(`${scope.ns}:reply:client-3`, 0, -1)).reverse();
    expect(announced.map((b) => b[0] === 0xff)).toEqual([true, false, false]);
    expect(announced.slice(1).map(String)).toEqual([jobs[1]!.id, jobs[2]!.id]);
    // The stored results expire before the client reads: the inline one needs none, the others are gone.
    await scope.raw.del(...jobs.map((j) => `${scope.ns}:res:${j.id}`));
    const read = await broker.waitForResults('client-3', 2_000);
    expect(read.records.map((r) => [r.id, r.value])).toEqual([[jobs[0]!.id, 'small']]);
    expect(read.gone).toEqual([jobs[1]!.id, jobs[2]!.id]);
    expect(read.missed).toBe(false);
  });

  it('a reply list its client does not read gets ids once it is long: its records are not kept twice', async () => {
    const jobs = Array.from({ length: 40 }, () => job('x', { replyTo: 'client-4' }));
    await broker.enqueue(jobs);
    const got = await fetchFrom(broker, NODE, ['x'], 40);
    for (const d of got.deliveries)
      await broker.settle([{ kind: 'ack', delivery: d, result: result(d, 'SUCCESS', 1) }]);
    const announced = (await scope.raw.lrangeBuffer(`${scope.ns}:reply:client-4`, 0, -1)).reverse();
    const inline = announced.filter((b) => b[0] === 0xff).length;
    expect(inline).toBeGreaterThan(0);
    expect(inline).toBeLessThan(40);
    expect(announced.slice(inline).every((b) => b[0] !== 0xff)).toBe(true);
    // Read in one go, it is every result, in order.
    const read = await broker.waitForResults('client-4', 2_000);
    expect(read.records.map((r) => r.id)).toEqual(jobs.map((j) => j.id));
  });

  it('a fetch whose carried result write fails still hands out what it reserved: the next fetch finds those jobs', async () => {
    const settled = job('x', { replyTo: 'broken-client' });
    await broker.enqueue([settled]);
    const [first] = (await fetchFrom(broker, NODE, ['x'], 1)).deliveries;
    const waiting = [job('x'), job('x'), job('x')];
    await broker.enqueue(waiting);
    // Another program wrote a plain string where the client's reply list should be: the announcement fails with WRONGTYPE after the script ran.
    await scope.raw.set(`${scope.ns}:reply:broken-client`, 'not a list');
    const settle: Settlement[] = [{ kind: 'ack', delivery: first!, result: result(first!, 'SUCCESS', 1) }];
    await expect(broker.fetch({ nodeId: NODE, plan: [{ queue: 'x', quota: 10 }], count: 10, settle })).rejects.toThrow(
      /WRONGTYPE/,
    );
    // The script reserved the three jobs before the write failed; they are this node's, and the next fetch hands them out.
    expect((await broker.counts(['x']))[0]).toMatchObject({ waiting: 0, reserved: 3 });
    const again = await fetchFrom(broker, NODE, ['x'], 10);
    expect(ids(again.deliveries).sort()).toEqual(waiting.map((j) => j.id).sort());
  });

  it('a fetch that found reserved jobs to hand out again and then failed leaves them for the next fetch', async () => {
    const settled = job('x', { replyTo: 'broken-client' });
    await broker.enqueue([settled]);
    const [first] = (await fetchFrom(broker, NODE, ['x'], 1)).deliveries;
    const waiting = [job('x'), job('x')];
    await broker.enqueue(waiting);
    await scope.raw.set(`${scope.ns}:reply:broken-client`, 'not a list');
    const settle: Settlement[] = [{ kind: 'ack', delivery: first!, result: result(first!, 'SUCCESS', 1) }];
    // First failure: the script reserved the two jobs, the announcement failed.
    await expect(broker.fetch({ nodeId: NODE, plan: [{ queue: 'x', quota: 10 }], count: 10, settle })).rejects.toThrow(
      /WRONGTYPE/,
    );
    // Second failure: this fetch finds the two reserved jobs, then fails the same way before handing them out.
    await expect(broker.fetch({ nodeId: NODE, plan: [{ queue: 'x', quota: 10 }], count: 10, settle })).rejects.toThrow(
      /WRONGTYPE/,
    );
    expect((await broker.counts(['x']))[0]).toMatchObject({ waiting: 0, reserved: 2 });
    // They are still this node's: the next fetch must hand them out, not leave them reserved until the node stops.
    const again = await fetchFrom(broker, NODE, ['x'], 10);
    expect(ids(again.deliveries).sort()).toEqual(waiting.map((j) => j.id).sort());
  });
});

describe('RedisBroker: entry decoding', () => {
  it('reads an entry whose fields are in another order, or repeated, as the general rule says (the last one wins)', async () => {
    const stream = scope.key('q:x');
    await scope.raw.xgroup('CREATE', stream, GROUP, '0', 'MKSTREAM');
    await scope.raw.xadd(
      stream,
      '*',
      'task',
      'add',
      'id',
      'j1',
      'attempt',
      '2',
      'redeliveries',
      '1',
      'payload',
      'p',
      'meta',
      '{"o":{},"e":5}',
    );
    await scope.raw.xadd(
      stream,
      '*',
      'id',
      'j2',
      'task',
      'add',
      'payload',
      'p',
      'attempt',
      '0',
      'redeliveries',
      '0',
      'meta',
      '{"o":{},"e":5}',
      'attempt',
      '3',
    );
    await scope.raw.xadd(
      stream,
      '*',
      'id',
      'j3',
      'task',
      'add',
      'payload',
      'p',
      'attempt',
      'x',
      'redeliveries',
      '0',
      'meta',
      '{"o":{},"e":5}',
    );
    const got = await fetchFrom(broker, NODE, ['x'], 10);
    expect(
      got.deliveries.map((d) => [
        d.job.id,
        d.job.attempt,
        d.job.redeliveries,
        d.job.enqueuedAt,
        d.malformed === undefined,
      ]),
    ).toEqual([
      ['j1', 2, 1, 5, true],
      ['j2', 3, 0, 5, true],
      ['j3', 0, 0, 5, false],
    ]);
  });
});
