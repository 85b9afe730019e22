import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MIN_LEASE_MS } from '../../dist/broker/broker-options.js';
import { GROUP } from '../../dist/broker/redis/keys.js';
import type { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import { WAIT } from '../helpers/wait.js';
import { fetchFrom, ids, job, registerNode, Scope, sleep } from './redis-helpers.js';

/** The shortest lease a broker takes: expiries in these tests take as long. */
const LEASE = MIN_LEASE_MS;
let scope: Scope;
let a: RedisBroker;
let b: RedisBroker;

beforeEach(async () => {
  scope = new Scope();
  a = await scope.broker({ leaseMs: LEASE });
  b = await scope.broker({ leaseMs: LEASE });
});
afterEach(async () => {
  await scope.cleanup();
});

/** Lets A's lease run out while B keeps beating; returns what B's heartbeat reported. */
function expireA(): Promise<string[]> {
  return vi.waitFor(
    async () => {
      const beat = await b.heartbeat('B', ['default']);
      expect(beat.fenced).toBe(false);
      expect(beat.expired).not.toEqual([]);
      return beat.expired;
    },
    { ...WAIT, interval: LEASE / 3 },
  );
}

describe('RedisBroker: membership', () => {
  it('registers, lists, renews and unregisters nodes', async () => {
    await registerNode(a, 'A', ['default']);
    await registerNode(b, 'B', ['default', 'other']);
    const nodes = await a.listNodes();
    expect(nodes.map((n) => n.id).sort()).toEqual(['A', 'B']);
    expect(nodes.find((n) => n.id === 'B')).toMatchObject({
      name: 'B@test',
      queues: ['default', 'other'],
      pid: process.pid,
    });
    expect(await a.knownQueues()).toEqual(['default', 'other']);
    for (let i = 0; i < 4; i++) {
      await sleep(LEASE / 3);
      expect(await a.heartbeat('A', ['default'])).toMatchObject({ fenced: false, expired: [] });
      await b.heartbeat('B', ['default']);
    }
    await a.unregister('A');
    expect((await b.listNodes()).map((n) => n.id)).toEqual(['B']);
    expect((await a.heartbeat('A', ['default'])).fenced).toBe(true);
  });

  it("heartbeat reports the next due time of the node's delayed jobs", async () => {
    await registerNode(a, 'A', ['default']);
    const j = job('default', { eta: Date.now() + 60_000 });
    await a.enqueue([j]);
    const before = Date.now();
    const { nextDueAt } = await a.heartbeat('A', ['default']);
    const after = Date.now();
    // Converted from Redis's clock by the difference: the eta, give or take the round trip (and a ms of rounding).
    expect(nextDueAt).toBeGreaterThanOrEqual(j.eta! - 1);
    expect(nextDueAt).toBeLessThanOrEqual(j.eta! + (after - before) + 1);
  });

  it('unregister gives back what the node still reserved', async () => {
    await registerNode(a, 'A', ['default']);
    const j = job('default');
    await a.enqueue([j]);
    expect(ids((await fetchFrom(a, 'A', ['default'], 5)).deliveries)).toEqual([j.id]);
    await a.unregister('A');
    await registerNode(b, 'B', ['default']);
    const again = await fetchFrom(b, 'B', ['default'], 5);
    expect(ids(again.deliveries)).toEqual([j.id]);
  });
});

describe('RedisBroker: recovery of a dead node', () => {
  it('moves every job a dead node reserved back to the queue, served first, none lost', async () => {
    await registerNode(a, 'A', ['default']);
    await registerNode(b, 'B', ['default']);
    const jobs = Array.from({ length: 450 }, () => job('default'));
    await a.enqueue(jobs);
    // A reserves most of them, some through :rd, then goes silent.
    const reserved = (await fetchFrom(a, 'A', ['default'], 400)).deliveries;
    expect(reserved).toHaveLength(400);
    await a.settle([{ kind: 'giveBack', delivery: reserved[0]! }]);
    const viaRd = (await fetchFrom(a, 'A', ['default'], 1)).deliveries;
    expect(viaRd[0]!.receipt.startsWith('r:')).toBe(true);

    expect(await expireA()).toEqual(['A']);
    const moved = await b.recover('A', 'B', 5);
    expect(moved).toBe(400);
    expect(await b.recover('A', 'B', 5)).toBe(0); // idempotent
    expect((await b.heartbeat('B', ['default'])).expired).toEqual([]);

    const got = (await fetchFrom(b, 'B', ['default'], 1000)).deliveries;
    expect(new Set(ids(got))).toEqual(new Set(jobs.map((j) => j.id)));
    expect(got).toHaveLength(450);
    // Recovered jobs come first (from :rd) with redeliveries + 1.
    expect(got.slice(0, 400).every((d) => d.receipt.startsWith('r:') && d.job.redeliveries >= 1)).toBe(true);
    expect(got.find((d) => d.job.id === reserved[0]!.job.id)!.job.redeliveries).toBe(2);
    // A's consumer is gone from the group.
    const consumers = (await scope.raw.xinfo('CONSUMERS', scope.key('q:default'), GROUP)) as unknown[][];
    expect(consumers.map((c) => c[1])).toEqual(['B']);
  });

  it('sends a job past maxRedeliveries to the dead set', async () => {
    await registerNode(a, 'A', ['default']);
    await registerNode(b, 'B', ['default']);
    const j = job('default', { redeliveries: 2 });
    await a.enqueue([j]);
    await fetchFrom(a, 'A', ['default'], 1);
    await expireA();
    expect(await b.recover('A', 'B', 2)).toBe(1);
    expect((await fetchFrom(b, 'B', ['default'], 5)).deliveries).toEqual([]);
    const dead = await b.listDead('default', 10);
    expect(dead.map((d) => d.job.id)).toEqual([j.id]);
    expect(dead[0]!.job.redeliveries).toBe(3);
    expect(dead[0]!.reason).toMatch(/delivered 3 times/);
  });

  it('a poison job whose workflow place is malformed goes to the dead set like any other: the recovery does not stop on it', async () => {
    await registerNode(a, 'A', ['default']);
    await registerNode(b, 'B', ['default']);
    const j = job('default', { redeliveries: 2, workflow: { id: 'wf-x', node: -1, queues: [] } });
    await a.enqueue([j]);
    await fetchFrom(a, 'A', ['default'], 1);
    await expireA();
    expect(await b.recover('A', 'B', 2)).toBe(1);
    const dead = await b.listDead('default', 10);
    expect(dead.map((d) => d.job.id)).toEqual([j.id]);
    expect(dead[0]!.reason).toMatch(/delivered 3 times/);
  });

  it('fences the dead node: its fetch and heartbeat say so, and its late settlements change nothing', async () => {
    await registerNode(a, 'A', ['default']);
    await registerNode(b, 'B', ['default']);
    const [x, y, z] = [job('default'), job('default'), job('default')];
    await a.enqueue([x, y, z]);
    const held = (await fetchFrom(a, 'A', ['default'], 3)).deliveries;
    await expireA();
    expect(await b.recover('A', 'B', 5)).toBe(3);

    // B takes two of the recovered copies; one stays waiting.
    const bGot = (await fetchFrom(b, 'B', ['default'], 2)).deliveries;
    expect(bGot).toHaveLength(2);

    const late = await a.fetch({
      nodeId: 'A',
      plan: [{ queue: 'default', quota: 5 }],
      count: 5,
      settle: [
        { kind: 'ack', delivery: held[0]! },
        { kind: 'dead', delivery: held[1]!, reason: 'late' },
        { kind: 'retry', delivery: held[2]!, delay: 0 },
      ],
    });
    expect(late).toMatchObject({ fenced: true, deliveries: [] });
    expect((await a.heartbeat('A', ['default'])).fenced).toBe(true);
    expect(await b.listDead('default', 10)).toEqual([]);
    expect((await b.counts(['default']))[0]).toMatchObject({ waiting: 1, reserved: 2, delayed: 0, dead: 0 });
    const rest = (await fetchFrom(b, 'B', ['default'], 5)).deliveries;
    expect(new Set([...ids(bGot), ...ids(rest)])).toEqual(new Set([x.id, y.id, z.id]));
  });

  it('sweeps orphans: entries reserved under an id that is neither a node nor recovered are recovered; live nodes keep theirs', async () => {
    const c = await scope.broker({ leaseMs: 60_000 });
    await registerNode(a, 'A', ['default']);
    await registerNode(b, 'B', ['default']);
    await registerNode(c, 'C', ['default']);
    const [x, y, z] = [job('default'), job('default'), job('default')];
    await a.enqueue([x, y, z]);
    expect(ids((await fetchFrom(a, 'A', ['default'], 2)).deliveries)).toEqual([x.id, y.id]);
    expect(ids((await fetchFrom(c, 'C', ['default'], 1)).deliveries)).toEqual([z.id]);
    // A's registration is gone while its reservations stay: what a read that landed after A's recovery leaves.
    await scope.raw.zrem(scope.key('nodes'), 'A');
    // A consumer that holds nothing and belongs to no node.
    await scope.raw.xgroup('CREATECONSUMER', scope.key('q:default'), GROUP, 'ghost');
    expect((await b.heartbeat('B', ['default'])).expired).toEqual([]);
    // B's beats sweep now and then; A is an orphan once idle two leases.
    const expired = await vi.waitFor(
      async () => {
        const beat = await b.heartbeat('B', ['default']);
        expect(beat.expired).toEqual(['A']);
        return beat.expired;
      },
      { ...WAIT, interval: LEASE / 3 },
    );
    expect(expired).toEqual(['A']);
    expect(await b.recover('A', 'B', 5)).toBe(2);
    const consumers = (await scope.raw.xinfo('CONSUMERS', scope.key('q:default'), GROUP)) as unknown[][];
    // A left with its recovery, the ghost with the sweep; B has read nothing yet.
    expect(consumers.map((row) => row[1])).toEqual(['C']);
    expect(ids((await fetchFrom(b, 'B', ['default'], 5)).deliveries).sort()).toEqual([x.id, y.id].sort());
    // C, a live node idle all along, kept its job.
    expect((await b.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 3 });
    const pendingC = (await scope.raw.xpending(scope.key('q:default'), GROUP, '-', '+', 10, 'C')) as unknown[][];
    expect(pendingC.map((e) => e[0])).toHaveLength(1);
  });

  it('retries a recovery whose recoverer died', async () => {
    await registerNode(a, 'A', ['default']);
    await registerNode(b, 'B', ['default']);
    const j = job('default');
    await a.enqueue([j]);
    await fetchFrom(a, 'A', ['default'], 1);
    await expireA();
    // A recoverer claims A and dies before moving anything.
    await scope.raw.zrem(scope.key('nodes'), 'A');
    await scope.raw.zadd(scope.key('recovering'), Date.now() + LEASE, 'A');
    expect(await b.recover('A', 'B', 5)).toBe(0); // claimed by someone alive
    const expired = await expireA();
    expect(expired).toEqual(['A']);
    expect(await b.recover('A', 'B', 5)).toBe(1);
    expect(ids((await fetchFrom(b, 'B', ['default'], 5)).deliveries)).toEqual([j.id]);
  });
});
