/**
 * The Consumer's Acker against a real Redis: a settlement the broker refuses
 * every time (here a result announcement to a reply key of the wrong type)
 * is isolated and dropped with its job id logged; the rest of its batch
 * lands, and flush() resolves instead of retrying for ever.
 */
import { describe, expect, it } from 'vitest';
import { BrokerRefusedError } from 'prefork';
import type { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import type { Delivery, Settlement } from '../../dist/broker/types.js';
import { Acker } from '../../dist/consumer/acker.js';
import { captureLog as capture } from '../helpers/worker.js';
import { fetchFrom, job, result, Scope, eachNode } from './redis-helpers.js';

let scope: Scope;
let broker: RedisBroker;
const NODE = 'node-a';

eachNode(['x'], (s, b) => {
  scope = s;
  broker = b;
});

function within<T>(p: Promise<T>, ms: number): Promise<T | 'still pending'> {
  return Promise.race([
    p,
    new Promise<'still pending'>((resolve) => setTimeout(() => resolve('still pending'), ms).unref()),
  ]);
}

describe('Acker', () => {
  it('a settlement the broker refuses every time is dropped alone, logged with its job id; the others land and flush resolves', async () => {
    const jobs = Array.from({ length: 6 }, (_, i) => job('x', { replyTo: i === 3 ? 'broken-client' : 'good-client' }));
    await broker.enqueue(jobs);
    // Another program wrote a plain string where this client's reply list should be: every LPUSH to it is WRONGTYPE.
    await scope.raw.set(`${scope.ns}:reply:broken-client`, 'not a list');
    const got = await fetchFrom(broker, NODE, ['x'], 10);
    expect(got.deliveries).toHaveLength(6);

    const { log, lines } = capture();
    const acker = new Acker(broker, log);
    for (const d of got.deliveries)
      acker.push({ kind: 'ack', delivery: d, result: result(d, 'SUCCESS', 1) } satisfies Settlement);
    expect(await within(acker.flush(), 20_000)).toBeUndefined();
    expect(acker.backlog).toBe(0);

    // Every job is settled in the broker, the refused one included (its ack went through before the announcement failed).
    expect((await broker.counts(['x']))[0]).toMatchObject({ waiting: 0, reserved: 0 });
    for (const j of jobs) expect((await broker.getResult(j.id))?.state).toBe('SUCCESS');
    // The good client heard of its five jobs (a split batch may announce some twice: a client drops a second one).
    const announced = (await broker.waitForResults('good-client', 2_000)).records;
    expect(new Set(announced.map((r) => r.id))).toEqual(new Set(jobs.filter((_, i) => i !== 3).map((j) => j.id)));
    const refused = lines.filter((l) => l.level === 50);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ jobId: jobs[3]!.id, kind: 'ack' });
    expect(String(refused[0]!.msg)).toMatch(/WRONGTYPE/);
  });

  it('backlog counts the batch on the wire until the broker confirms it', async () => {
    await broker.enqueue([job('x'), job('x')]);
    const got = await fetchFrom(broker, NODE, ['x'], 10);
    const acker = new Acker(broker, capture().log);
    for (const d of got.deliveries) acker.push({ kind: 'ack', delivery: d });
    // The batch leaves on the next turn of the event loop; until its reply comes it still counts.
    await new Promise((resolve) => setImmediate(resolve));
    expect(acker.backlog).toBe(2);
    await acker.flush();
    expect(acker.backlog).toBe(0);
  });

  describe('while a fetch is coming (holdWhile)', () => {
    // A hold that cannot expire during a test: what leaves, leaves because of a fetch, a result or release().
    const LONG_HOLD_MS = 10 * 60_000;
    const turns = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    const reserved = async (): Promise<number> => (await broker.counts(['x']))[0]!.reserved;

    it('an ack without a result waits for the fetch and rides on it: no round trip of its own', async () => {
      await broker.enqueue([job('x'), job('x')]);
      const [first, second] = (await fetchFrom(broker, NODE, ['x'], 1)).deliveries.concat(
        (await fetchFrom(broker, NODE, ['x'], 1)).deliveries,
      );
      const acker = new Acker(broker, capture().log, { holdMs: LONG_HOLD_MS });
      acker.holdWhile(() => true);
      acker.push({ kind: 'ack', delivery: first! });
      // A Redis round trip: had the ack left on its own, it would have landed by now.
      expect(await reserved()).toBe(2);
      let carried: Settlement[] = [];
      await acker.carry((settle) => {
        carried = settle;
        return broker.fetch({ nodeId: NODE, plan: [{ queue: 'x', quota: 0 }], count: 0, settle });
      });
      expect(carried.map((c) => c.delivery.job.id)).toEqual([first!.job.id]);
      expect(acker.backlog).toBe(0);
      expect(await reserved()).toBe(1);
      // Held until the Consumer says no fetch is coming (it stops fetching or blocks): release() sends it.
      acker.push({ kind: 'ack', delivery: second! });
      expect(await reserved()).toBe(1);
      expect(acker.backlog).toBe(1);
      acker.release();
      await acker.flush();
      expect(await reserved()).toBe(0);
    });

    it('a fetch that carried a settlement Redis refuses is refused as a whole; the batch then leaves on its own, the refused one isolated, and no fetch carries it again', async () => {
      const jobs = [job('x', { replyTo: 'good' }), job('x', { replyTo: 'broken' }), job('x', { replyTo: 'good' })];
      await broker.enqueue(jobs);
      await scope.raw.set(`${scope.ns}:reply:broken`, 'not a list');
      const got = (await fetchFrom(broker, NODE, ['x'], 10)).deliveries;
      const { log, lines } = capture();
      const acker = new Acker(broker, log, { holdMs: LONG_HOLD_MS, coalesceMs: LONG_HOLD_MS, rideMs: LONG_HOLD_MS });
      acker.holdWhile(() => true);
      acker.coalesceWhile(() => true);
      acker.rideWhile(() => true);
      for (const d of got) acker.push({ kind: 'ack', delivery: d, result: result(d, 'SUCCESS', 1) });
      const fetch = (settle: Settlement[]) =>
        broker.fetch({ nodeId: NODE, plan: [{ queue: 'x', quota: 0 }], count: 0, settle });
      let carried = 0;
      const first = acker.carry((settle) => {
        carried = settle.length;
        return fetch(settle);
      });
      await expect(first).rejects.toBeInstanceOf(BrokerRefusedError);
      expect(carried).toBe(3);
      // The Consumer fetches again at once: that fetch carries none of the refused batch.
      await acker.carry((settle) => {
        carried = settle.length;
        return fetch(settle);
      });
      expect(carried).toBe(0);
      expect(await within(acker.flush(), 20_000)).toBeUndefined();
      for (const j of jobs) expect((await broker.getResult(j.id))?.state).toBe('SUCCESS');
      const refused = lines.filter((l) => l.level === 50);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatchObject({ jobId: jobs[1]!.id });
    });

    it('a settlement with a result leaves at once (someone may be waiting for it)', async () => {
      await broker.enqueue([job('x')]);
      const [d] = (await fetchFrom(broker, NODE, ['x'], 1)).deliveries;
      const acker = new Acker(broker, capture().log, { holdMs: LONG_HOLD_MS });
      acker.holdWhile(() => true);
      acker.push({ kind: 'ack', delivery: d!, result: result(d!, 'SUCCESS', 1) });
      // Not held: it is on its way without a fetch (a held one would still be queued for the carry below).
      await turns(3);
      let carried: Settlement[] | undefined;
      await acker.carry((settle) => {
        carried = settle;
        return Promise.resolve();
      });
      expect(carried).toEqual([]);
      await acker.flush();
      expect((await broker.getResult(d!.job.id))?.state).toBe('SUCCESS');
    });

    it('while the node is busy, results gather: a fetch carries them, or enough of them leave together; idle, one leaves at once', async () => {
      await broker.enqueue(Array.from({ length: 6 }, () => job('x')));
      const got = (await fetchFrom(broker, NODE, ['x'], 6)).deliveries;
      const acker = new Acker(broker, capture().log, { coalesceMs: LONG_HOLD_MS, coalesceMax: 3 });
      let busy = true;
      acker.coalesceWhile(() => busy);
      const settle = (d: Delivery): void =>
        acker.push({ kind: 'ack', delivery: d, result: result(d, 'SUCCESS', 1) } satisfies Settlement);
      const stored = async (d: Delivery): Promise<boolean> => (await broker.getResult(d.job.id)) !== undefined;

      settle(got[0]!);
      settle(got[1]!);
      // A Redis round trip: had they left on their own, they would have landed by now.
      await turns(3);
      expect(await stored(got[0]!)).toBe(false);
      expect(acker.backlog).toBe(2);
      settle(got[2]!);
      await acker.flush();
      expect(await stored(got[2]!)).toBe(true);
      expect(acker.batches).toMatchObject({ full: 1, immediate: 0, timer: 0 });

      settle(got[3]!);
      await turns(3);
      expect(await stored(got[3]!)).toBe(false);
      let carried: Settlement[] = [];
      await acker.carry((s) => {
        carried = s;
        return broker.fetch({ nodeId: NODE, plan: [{ queue: 'x', quota: 0 }], count: 0, settle: s });
      });
      expect(carried.map((c) => c.delivery.job.id)).toEqual([got[3]!.job.id]);
      expect(await stored(got[3]!)).toBe(true);

      busy = false;
      settle(got[4]!);
      await expect.poll(() => stored(got[4]!), { message: 'an idle node sends at once' }).toBe(true);
      expect(acker.batches).toMatchObject({ full: 1, carried: 1, immediate: 1, timer: 0, released: 0 });
      expect(await reserved()).toBe(1);
    });

    it('with jobs not yet started (rideWhile), a result waits for the next fetch; without, it only coalesces', async () => {
      await broker.enqueue(Array.from({ length: 3 }, () => job('x')));
      const got = (await fetchFrom(broker, NODE, ['x'], 3)).deliveries;
      const acker = new Acker(broker, capture().log, { rideMs: LONG_HOLD_MS, coalesceMs: 1 });
      let backlog = true;
      acker.holdWhile(() => true);
      acker.coalesceWhile(() => true);
      acker.rideWhile(() => backlog);
      const settle = (d: Delivery): void =>
        acker.push({ kind: 'ack', delivery: d, result: result(d, 'SUCCESS', 1) } satisfies Settlement);
      const stored = async (d: Delivery): Promise<boolean> => (await broker.getResult(d.job.id)) !== undefined;

      settle(got[0]!);
      settle(got[1]!);
      // Past the coalescing timer and a Redis round trip: only a fetch takes them now.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await stored(got[0]!)).toBe(false);
      let carried: Settlement[] = [];
      await acker.carry((s) => {
        carried = s;
        return broker.fetch({ nodeId: NODE, plan: [{ queue: 'x', quota: 0 }], count: 0, settle: s });
      });
      expect(carried.map((c) => c.delivery.job.id)).toEqual([got[0]!.job.id, got[1]!.job.id]);
      expect(await stored(got[1]!)).toBe(true);

      // Nothing left to start: the coalescing timer sends it, no fetch needed.
      backlog = false;
      settle(got[2]!);
      await expect.poll(() => stored(got[2]!), { message: 'sent by the coalescing timer' }).toBe(true);
      expect(acker.batches).toMatchObject({ carried: 1, timer: 1 });
    });

    it('a held ack is not held for ever: with no fetch carrying it, it leaves when the hold expires', async () => {
      await broker.enqueue([job('x')]);
      const [d] = (await fetchFrom(broker, NODE, ['x'], 1)).deliveries;
      const acker = new Acker(broker, capture().log, { holdMs: 1 });
      acker.holdWhile(() => true);
      acker.push({ kind: 'ack', delivery: d! });
      // No fetch, no release(), no flush(): only the hold timer can send it.
      await expect.poll(async () => await reserved(), { message: 'the held ack went out without a fetch' }).toBe(0);
      expect(acker.backlog).toBe(0);
    });
  });
});
