/**
 * The schedule part of the Broker contract (src/broker/schedule-types.ts),
 * over both brokers: a tick is claimed by compare-and-set on the entry's
 * state, its job enqueued in the same step; a second claim of the same tick
 * is stale; a claim ahead of the broker's clock is early; a definition
 * published anew wins and is handed to a node that claims with the old one.
 */
import { describe, expect, it } from 'vitest';
import type { Broker, NewJob } from '../../dist/broker/types.js';
import { MIN_LEASE_MS } from '../../dist/broker/broker-options.js';
import type { ScheduleDefinition } from '../../dist/broker/types.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const def = (name: string, definition = '{"v":1}', hash = `h-${definition}`): ScheduleDefinition => ({
  name,
  definition,
  hash,
});

function tickJob(id: string, scheduledFor: number, queue = 'q'): NewJob {
  return {
    id,
    task: 'tick',
    queue,
    payload: new Uint8Array([0x90]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: Date.now(),
    scheduledFor,
  };
}

describe.each(['memory', 'redis'] as const)('Broker schedule contract over %s', (kind) => {
  const { broker, node } = eachBrokerScope(kind, 'sched');

  async function fetchIds(b: Broker, nodeId: string): Promise<{ id: string; scheduledFor?: number }[]> {
    const reply = await b.fetch({ nodeId, plan: [{ queue: 'q', quota: 100 }], count: 100, settle: [] });
    return reply.deliveries.map((d) => ({ id: d.job.id, scheduledFor: d.job.scheduledFor }));
  }

  it('publish starts a new entry at the broker now; publishing it again unchanged keeps its state', async () => {
    const b = await broker();
    const first = await b.publishSchedule([def('e')]);
    const state = first.states[0];
    expect(state).toMatchObject({ name: 'e', hash: 'h-{"v":1}' });
    const brokerNow = Date.now() + first.skew;
    expect(Math.abs((state?.last ?? 0) - brokerNow)).toBeLessThan(60_000);
    await sleep(5); // the broker's clock passes the entry's start
    const claim = await b.claimTicks([
      { name: 'e', hash: 'h-{"v":1}', expectedLast: state!.last, newLast: state!.last + 1, jobs: [] },
    ]);
    expect(claim.results[0]?.outcome).toBe('claimed');
    const again = await b.publishSchedule([def('e')]);
    expect(again.states[0]?.last).toBe(state!.last + 1);
  });

  it('a tick is claimed once: the first claim enqueues its job, a second one of the same tick is stale', async () => {
    const b = await broker();
    const other = await broker();
    const me = await node(b, 'n1');
    const { states } = await b.publishSchedule([def('e')]);
    const last = states[0]!.last;
    const tick = last + 1;
    await sleep(5); // the broker's clock passes the tick
    const claim = { name: 'e', hash: 'h-{"v":1}', expectedLast: last, newLast: tick };
    const won = await b.claimTicks([{ ...claim, jobs: [tickJob('j1', tick)] }]);
    const lost = await other.claimTicks([{ ...claim, jobs: [tickJob('j2', tick)] }]);
    expect(won.results[0]?.outcome).toBe('claimed');
    expect(lost.results[0]).toMatchObject({ outcome: 'stale', state: { last: tick, hash: 'h-{"v":1}' } });
    expect(lost.results[0]?.state?.definition).toBeUndefined();
    expect(await fetchIds(b, me)).toEqual([{ id: 'j1', scheduledFor: tick }]);
    const [listed] = await other.listSchedule();
    expect(listed).toMatchObject({ name: 'e', last: tick, lastTick: tick, lastJobId: 'j1', definition: '{"v":1}' });
  });

  it("a tick's job is in the job index as any enqueued job: waiting, reserved by its node, gone once acked", async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    const { states } = await b.publishSchedule([def('e')]);
    const last = states[0]!.last;
    await sleep(5); // the broker's clock passes the tick
    const claim = { name: 'e', hash: 'h-{"v":1}', expectedLast: last, newLast: last + 1 };
    await b.claimTicks([{ ...claim, jobs: [tickJob('t1', last + 1)] }]);
    expect(await b.locate('t1')).toMatchObject({ id: 't1', queue: 'q', state: 'waiting', task: 'tick', attempt: 0 });
    const reply = await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
    const [delivery] = reply.deliveries;
    expect(delivery?.job).toMatchObject({ id: 't1', scheduledFor: last + 1 });
    expect(await b.locate('t1')).toMatchObject({ state: 'reserved', nodeId: me });
    await b.settle([{ kind: 'ack', delivery: delivery! }]);
    expect(await b.locate('t1')).toBeUndefined();
  });

  it("a tick's job can be taken out while it waits (revoked): never fetched", async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    const { states } = await b.publishSchedule([def('a'), def('b')]);
    await sleep(5);
    const [a, bb] = states;
    const jobs = [tickJob('m1', a!.last - 2000), tickJob('m2', a!.last - 1000)];
    await b.claimTicks([
      { name: 'a', hash: 'h-{"v":1}', expectedLast: a!.last, newLast: a!.last + 1, jobs },
      { name: 'b', hash: 'h-{"v":1}', expectedLast: bb!.last, newLast: bb!.last + 1, jobs: [tickJob('m3', 1)] },
    ]);
    for (const id of ['m1', 'm2', 'm3']) expect(await b.locate(id)).toMatchObject({ state: 'waiting', queue: 'q' });
    expect(await b.removeWaiting('m2')).toMatchObject({ id: 'm2', state: 'waiting' });
    expect(await b.locate('m2')).toBeUndefined();
    expect((await fetchIds(b, me)).map((j) => j.id)).toEqual(['m1', 'm3']);
  });

  it('a claim past the broker now is early and changes nothing', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    const { states } = await b.publishSchedule([def('e')]);
    const last = states[0]!.last;
    const ahead = last + 3_600_000;
    const reply = await b.claimTicks([
      { name: 'e', hash: 'h-{"v":1}', expectedLast: last, newLast: ahead, jobs: [tickJob('j1', ahead)] },
    ]);
    expect(reply.results[0]?.outcome).toBe('early');
    expect(await fetchIds(b, me)).toEqual([]);
    expect((await b.listSchedule())[0]?.last).toBe(last);
  });

  it('a definition published anew wins: a claim with the old hash is stale and gets the new definition', async () => {
    const b = await broker();
    const { states } = await b.publishSchedule([def('e', '{"v":1}')]);
    const renewed = await b.publishSchedule([def('e', '{"v":2}')]);
    expect(renewed.states[0]).toMatchObject({ hash: 'h-{"v":2}' });
    expect(renewed.states[0]!.last).toBeGreaterThanOrEqual(states[0]!.last);
    const reply = await b.claimTicks([
      { name: 'e', hash: 'h-{"v":1}', expectedLast: states[0]!.last, newLast: states[0]!.last + 1, jobs: [] },
    ]);
    expect(reply.results[0]).toMatchObject({
      outcome: 'stale',
      state: { hash: 'h-{"v":2}', definition: '{"v":2}', last: renewed.states[0]!.last },
    });
  });

  it('several entries in one call, each on its own; a dropped entry is unknown', async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    const { states } = await b.publishSchedule([def('a'), def('b'), def('c')]);
    expect(await b.dropSchedule(['c', 'nope'])).toBe(1);
    const [a, bb, c] = states;
    await sleep(5);
    const reply = await b.claimTicks([
      { name: 'a', hash: 'h-{"v":1}', expectedLast: a!.last, newLast: a!.last + 1, jobs: [tickJob('ja', 1)] },
      { name: 'b', hash: 'h-{"v":1}', expectedLast: bb!.last - 1, newLast: bb!.last + 1, jobs: [tickJob('jb', 2)] },
      { name: 'c', hash: 'h-{"v":1}', expectedLast: c!.last, newLast: c!.last + 1, jobs: [tickJob('jc', 3)] },
    ]);
    expect(reply.results.map((r) => r.outcome)).toEqual(['claimed', 'stale', 'unknown']);
    expect(await fetchIds(b, me)).toEqual([{ id: 'ja', scheduledFor: 1 }]);
    expect((await b.listSchedule()).map((s) => s.name)).toEqual(['a', 'b']);
  });

  it('an entry stored again after its state vanished resumes from the since it brings (at most now); a stored one keeps its state', async () => {
    const b = await broker();
    const { states, skew } = await b.publishSchedule([def('kept')]);
    const since = Date.now() + skew - 10_000;
    const again = await b.publishSchedule([
      { ...def('lost'), since },
      { ...def('kept'), since },
      { ...def('ahead'), since: Date.now() + skew + 3_600_000 },
    ]);
    const [lost, kept, ahead] = again.states;
    expect(lost?.last).toBe(since);
    expect(kept?.last).toBe(states[0]?.last);
    expect(ahead!.last).toBeLessThan(Date.now() + again.skew + 60_000);
    // A changed definition over a stored one starts from now, whatever the since.
    const changed = await b.publishSchedule([{ ...def('kept', '{"v":2}'), since }]);
    expect(changed.states[0]!.last).toBeGreaterThan(since);
  });

  it("'all' misfires: several jobs of one entry in one claim, in tick order", async () => {
    const b = await broker();
    const me = await node(b, 'n1');
    const { states } = await b.publishSchedule([def('e')]);
    const last = states[0]!.last;
    const jobs = [tickJob('t1', last - 3000), tickJob('t2', last - 2000), tickJob('t3', last - 1000)];
    await sleep(5);
    const reply = await b.claimTicks([{ name: 'e', hash: 'h-{"v":1}', expectedLast: last, newLast: last + 1, jobs }]);
    expect(reply.results[0]?.outcome).toBe('claimed');
    expect((await fetchIds(b, me)).map((j) => j.id)).toEqual(['t1', 't2', 't3']);
    expect((await b.listSchedule())[0]).toMatchObject({ lastTick: last - 1000, lastJobId: 't3' });
  });

  it('a claim of more jobs than one write of the job index takes: each is enqueued and indexed', async () => {
    const b = await broker();
    const { states } = await b.publishSchedule([def('e')]);
    const last = states[0]!.last;
    const jobs = Array.from({ length: 4001 }, (_, i) => tickJob(`t${i}`, last - 4001 + i));
    await sleep(5);
    const reply = await b.claimTicks([{ name: 'e', hash: 'h-{"v":1}', expectedLast: last, newLast: last + 1, jobs }]);
    expect(reply.results[0]?.outcome).toBe('claimed');
    for (const id of ['t0', 't2000', 't4000']) expect(await b.locate(id)).toMatchObject({ id, state: 'waiting' });
    expect((await b.listSchedule())[0]).toMatchObject({ lastJobId: 't4000' });
  });

  it('the leader lease: the first node that stands takes it, the others see it, a lapsed one is taken with the next token', async () => {
    const b = await broker({ leaseMs: MIN_LEASE_MS });
    const a = await node(b, 'a');
    const c = await node(b, 'c');
    const plain = await node(b, 'plain');
    const first = await b.heartbeat(a, ['q'], true);
    expect(first.leader?.nodeId).toBe(a);
    const token = first.leader!.token;
    expect((await b.heartbeat(c, ['q'], true)).leader).toEqual({ nodeId: a, token });
    expect((await b.heartbeat(a, ['q'], true)).leader).toEqual({ nodeId: a, token });
    // A node that does not stand for leader learns nothing of it, and changes nothing.
    expect((await b.heartbeat(plain, ['q'])).leader).toBeUndefined();
    expect(await b.leader()).toEqual({ nodeId: a, token });
    // a stops beating: once its leader lease lapses, c's next beat takes it over.
    await expect
      .poll(async () => {
        await b.heartbeat(plain, ['q']);
        return (await b.heartbeat(c, ['q'], true)).leader;
      })
      .toEqual({ nodeId: c, token: token + 1 });
    expect(await b.leader()).toEqual({ nodeId: c, token: token + 1 });
    // a's node lease ran out too: once a recovery took its jobs, its next beat is fenced (a lapsed lease nobody took is renewed).
    await b.recover(a, c, 5);
    expect((await b.heartbeat(a, ['q'], true)).fenced).toBe(true);
    expect(await b.leader()).toEqual({ nodeId: c, token: token + 1 });
  });

  it('a leader that leaves releases the lease: the nodes are woken, and the next that stands takes it with the next token', async () => {
    // A lease far longer than the test: only the release can explain the takeover.
    const b = await broker({ leaseMs: 600_000 });
    const a = await node(b, 'a');
    const c = await node(b, 'c');
    const token = (await b.heartbeat(a, ['q'], true)).leader!.token;
    expect((await b.heartbeat(c, ['q'], true)).leader).toEqual({ nodeId: a, token });
    const woken: string[] = [];
    const unwatch = await b.watchControl((id) => woken.push(id));
    try {
      // A node that does not lead leaves: the lease stays where it is.
      const other = await node(b, 'other');
      await b.unregister(other);
      expect(await b.leader()).toEqual({ nodeId: a, token });
      await b.unregister(a);
      expect(await b.leader()).toBeUndefined();
      await expect.poll(() => woken).toContain('');
      expect((await b.heartbeat(c, ['q'], true)).leader).toEqual({ nodeId: c, token: token + 1 });
      expect(await b.leader()).toEqual({ nodeId: c, token: token + 1 });
    } finally {
      await unwatch();
    }
  });

  it('dropUnusedSchedule drops the entries no live node registered, only for the holder of the lease it names', async () => {
    const b = await broker({ leaseMs: 600_000 });
    await b.publishSchedule([def('x'), def('y')]);
    await b.register({
      id: 'n1',
      name: 'n1@test',
      host: 'test',
      pid: process.pid,
      queues: ['q'],
      concurrency: '1',
      startedAt: Date.now(),
      schedule: ['x'],
    });
    const lease = (await b.heartbeat('n1', ['q'], true)).leader!;
    expect(lease.nodeId).toBe('n1');
    // A lease that is not the holder's (a stale token, another node): nothing is dropped.
    expect(await b.dropUnusedSchedule({ nodeId: 'n1', token: lease.token - 1 })).toEqual([]);
    expect(await b.dropUnusedSchedule({ nodeId: 'other', token: lease.token })).toEqual([]);
    expect((await b.scheduleNames()).sort()).toEqual(['x', 'y']);
    expect(await b.dropUnusedSchedule(lease)).toEqual(['y']);
    expect(await b.scheduleNames()).toEqual(['x']);
  });

  it('the stored entry names, and the schedule entries each node registered', async () => {
    const b = await broker();
    await b.publishSchedule([def('x'), def('y')]);
    expect((await b.scheduleNames()).sort()).toEqual(['x', 'y']);
    await b.register({
      id: 'n1',
      name: 'n1@test',
      host: 'test',
      pid: process.pid,
      queues: ['q'],
      concurrency: '1',
      startedAt: Date.now(),
      schedule: ['x'],
    });
    await node(b, 'n2');
    const nodes = await b.listNodes();
    expect(nodes.find((n) => n.id === 'n1')?.schedule).toEqual(['x']);
    expect(nodes.find((n) => n.id === 'n2')?.schedule).toBeUndefined();
  });
});
