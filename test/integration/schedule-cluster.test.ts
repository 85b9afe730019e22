/**
 * Periodic tasks on real worker processes sharing one Redis: each tick fires
 * once per cluster whatever the number of nodes, and after an outage during
 * which no node ran, `misfire: 'once'` fires one job for the missed ticks
 * and `'skip'` none. Ticks are counted by the tick each job stands for
 * (`currentTask().scheduledFor`), from the ledger the task appends to.
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createBroker } from 'prefork/broker';
import { cleanup, fixture, newLedger, silent, startNode, uniqueName, type NodeProcess } from '../helpers/worker.js';

afterEach(cleanup);

interface Tick {
  label: string;
  scheduledFor: number;
  id: string;
}

function ticks(ledger: string, label: string): Tick[] {
  let text: string;
  try {
    text = readFileSync(ledger, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [l = '', at = '', id = ''] = line.split(' ');
      return { label: l, scheduledFor: Number(at), id };
    })
    .filter((t) => t.label === label)
    .sort((a, b) => a.scheduledFor - b.scheduledFor);
}

/**
 * How many jobs stand for each tick: distinct job ids (delivery is at least
 * once: a job whose node died under it runs again, as the same job).
 */
function perTick(list: Tick[]): Map<number, number> {
  const ids = new Map<number, Set<string>>();
  for (const t of list) ids.set(t.scheduledFor, (ids.get(t.scheduledFor) ?? new Set()).add(t.id));
  return new Map([...ids].map(([tick, jobs]) => [tick, jobs.size]));
}

/** The distinct ticks fired, in order. */
function tickTimes(list: Tick[]): number[] {
  return [...new Set(list.map((t) => t.scheduledFor))].sort((a, b) => a - b);
}

/** The broker's clock (Redis TIME), in ms. */
async function redisNow(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

async function stop(node: NodeProcess): Promise<void> {
  node.proc.kill('SIGTERM');
  expect(await node.exited).toEqual({ code: 0, signal: null });
}

function nodeOptions(namespace: string, schedule: Record<string, unknown>): Record<string, unknown> {
  return {
    app: fixture('tasks-schedule.mjs'),
    broker: inject('redisUrl'),
    namespace,
    concurrency: 1,
    schedule,
  };
}

describe('a schedule run by several nodes', () => {
  it('three nodes with the same every-second entry for ten ticks: each tick fires exactly once, none skipped', async () => {
    const ledger = newLedger();
    const options = nodeOptions(uniqueName('sched'), { beat: { task: 'tick', args: ['beat'], every: '1s' } });
    const redis = new Redis(inject('redisUrl'));
    try {
      const nodes = await Promise.all([0, 1, 2].map(() => startNode(options, ledger, 'schedule-node.mjs')));
      const allUp = await redisNow(redis);
      await expect
        .poll(() => ticks(ledger, 'beat').filter((t) => t.scheduledFor > allUp).length, { timeout: 60_000 })
        .toBeGreaterThanOrEqual(10);
      await Promise.all(nodes.map(stop));
    } finally {
      redis.disconnect();
    }
    const fired = ticks(ledger, 'beat');
    expect(
      [...perTick(fired).values()].every((n) => n === 1),
      JSON.stringify([...perTick(fired)]),
    ).toBe(true);
    const times = tickTimes(fired);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(1000);
    expect(times.every((t) => t % 1000 === 0)).toBe(true);
  });

  it("all nodes stopped for five ticks, then restarted: 'once' fires one catch-up job, 'skip' none", async () => {
    const ledger = newLedger();
    const options = nodeOptions(uniqueName('sched'), {
      once: { task: 'tick', args: ['once'], every: '1s' },
      skip: { task: 'tick', args: ['skip'], every: '1s', misfire: 'skip' },
    });
    const redis = new Redis(inject('redisUrl'));
    let stoppedAt: number;
    try {
      const first = await Promise.all([0, 1].map(() => startNode(options, ledger, 'schedule-node.mjs')));
      await expect.poll(() => ticks(ledger, 'skip').length, { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
      await Promise.all(first.map(stop));
      stoppedAt = await redisNow(redis);
      // No node runs while the broker's clock passes five more ticks.
      await expect.poll(() => redisNow(redis), { timeout: 60_000, interval: 200 }).toBeGreaterThan(stoppedAt + 6000);
      const restartedAt = await redisNow(redis);
      const again = await Promise.all([0, 1].map(() => startNode(options, ledger, 'schedule-node.mjs')));
      await expect
        .poll(() => ticks(ledger, 'skip').filter((t) => t.scheduledFor > restartedAt).length, { timeout: 60_000 })
        .toBeGreaterThanOrEqual(3);
      await Promise.all(again.map(stop));
    } finally {
      redis.disconnect();
    }
    const once = ticks(ledger, 'once');
    const skip = ticks(ledger, 'skip');
    for (const list of [once, skip]) expect([...perTick(list).values()].every((n) => n === 1)).toBe(true);
    const lastBefore = (list: Tick[]): number =>
      Math.max(...list.filter((t) => t.scheduledFor <= stoppedAt).map((t) => t.scheduledFor));
    const end = Math.min(once.at(-1)!.scheduledFor, skip.at(-1)!.scheduledFor);
    const after = (list: Tick[]): number[] => tickTimes(list).filter((t) => t > lastBefore(list) && t <= end);
    const onceAfter = after(once);
    const skipAfter = after(skip);
    // The first job after the outage stands for a tick at least five ticks later: the missed ones did not fire one by one.
    const catchUp = onceAfter[0]!;
    expect(catchUp - lastBefore(once)).toBeGreaterThanOrEqual(5000);
    // 'once': that one job, then the regular ticks; 'skip': only the regular ticks, which both entries share.
    expect(skipAfter[0]).toBeGreaterThan(catchUp);
    expect(onceAfter).toEqual([catchUp, ...skipAfter]);
  });

  it('a node that starts with a changed entry: its definition fires from the next tick, on the other nodes too, each tick once', async () => {
    const ledger = newLedger();
    const namespace = uniqueName('sched');
    const v1 = nodeOptions(namespace, { e: { task: 'tick', args: ['v1'], every: '1s' } });
    const v2 = nodeOptions(namespace, { e: { task: 'tick', args: ['v2'], every: '1s' } });
    const redis = new Redis(inject('redisUrl'));
    let newLeft: number;
    try {
      const old = await startNode(v1, ledger, 'schedule-node.mjs');
      await expect.poll(() => ticks(ledger, 'v1').length, { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
      const renewed = await startNode(v2, ledger, 'schedule-node.mjs');
      await expect.poll(() => ticks(ledger, 'v2').length, { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
      await stop(renewed);
      newLeft = await redisNow(redis);
      // Only the node started with the old definition runs now: it fires the new one.
      await expect
        .poll(() => ticks(ledger, 'v2').filter((t) => t.scheduledFor > newLeft).length, { timeout: 60_000 })
        .toBeGreaterThanOrEqual(2);
      await stop(old);
    } finally {
      redis.disconnect();
    }
    const v1Ticks = ticks(ledger, 'v1');
    const v2Ticks = ticks(ledger, 'v2');
    expect(v1Ticks.every((t) => t.scheduledFor < v2Ticks[0]!.scheduledFor)).toBe(true);
    expect(v1Ticks.filter((t) => t.scheduledFor > newLeft)).toEqual([]);
    const all = [...v1Ticks, ...v2Ticks];
    expect([...perTick(all).values()].every((n) => n === 1)).toBe(true);
  });

  it('the leader SIGKILLed mid-run: another node takes the lease over with a higher token, and ticks keep firing once, with no gap', async () => {
    const ledger = newLedger();
    const namespace = uniqueName('sched');
    const leaseMs = 2000;
    const options = { ...nodeOptions(namespace, { beat: { task: 'tick', args: ['beat'], every: '1s' } }), leaseMs };
    const broker = createBroker(inject('redisUrl'), { namespace, logger: silent });
    await broker.connect();
    const redis = new Redis(inject('redisUrl'));
    try {
      const nodes = await Promise.all([0, 1, 2].map(() => startNode(options, ledger, 'schedule-node.mjs')));
      await expect.poll(() => ticks(ledger, 'beat').length, { timeout: 60_000 }).toBeGreaterThanOrEqual(3);
      const before = await broker.leader();
      const leader = nodes.find((n) => n.nodeId === before?.nodeId);
      expect(leader).toBeDefined();
      leader!.proc.kill('SIGKILL');
      expect((await leader!.exited).signal).toBe('SIGKILL');
      const killedAt = await redisNow(redis);
      await expect.poll(() => broker.leader(), { timeout: 60_000 }).toMatchObject({ token: before!.token + 1 });
      const after = await broker.leader();
      expect(nodes.filter((n) => n !== leader).map((n) => n.nodeId)).toContain(after?.nodeId);
      await expect
        .poll(() => ticks(ledger, 'beat').filter((t) => t.scheduledFor > killedAt).length, { timeout: 60_000 })
        .toBeGreaterThanOrEqual(5);
      await Promise.all(nodes.filter((n) => n !== leader).map(stop));
    } finally {
      redis.disconnect();
      await broker.close();
    }
    const fired = ticks(ledger, 'beat');
    expect(
      [...perTick(fired).values()].every((n) => n === 1),
      JSON.stringify([...perTick(fired)]),
    ).toBe(true);
    const times = tickTimes(fired);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeLessThanOrEqual(leaseMs);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(1000);
  });

  it("an entry's state lost from Redis while a node runs it: the tick it was claiming still fires, none skipped", async () => {
    const ledger = newLedger();
    const namespace = uniqueName('sched');
    const options = nodeOptions(namespace, { beat: { task: 'tick', args: ['beat'], every: '1s' } });
    const redis = new Redis(inject('redisUrl'));
    try {
      const node = await startNode(options, ledger, 'schedule-node.mjs');
      await expect.poll(() => ticks(ledger, 'beat').length, { timeout: 60_000 }).toBeGreaterThanOrEqual(1);
      // As Redis restarted without persistence (or the leader dropped the entry): the state is gone.
      await redis.del(`{${namespace}}:sched:beat`);
      const lostAt = await redisNow(redis);
      await expect
        .poll(() => ticks(ledger, 'beat').filter((t) => t.scheduledFor > lostAt + 2000).length, { timeout: 60_000 })
        .toBeGreaterThanOrEqual(1);
      await stop(node);
    } finally {
      redis.disconnect();
    }
    const fired = ticks(ledger, 'beat');
    expect([...perTick(fired).values()].every((n) => n === 1)).toBe(true);
    const times = tickTimes(fired);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(1000);
  });

  it("the leader's duty: an entry removed from every node's schedule stops firing and is forgotten", async () => {
    const ledger = newLedger();
    const namespace = uniqueName('sched');
    const both = {
      ...nodeOptions(namespace, {
        kept: { task: 'tick', args: ['kept'], every: '1s' },
        removed: { task: 'tick', args: ['removed'], every: '1s' },
      }),
      leaseMs: 1000,
    };
    const one = { ...nodeOptions(namespace, { kept: { task: 'tick', args: ['kept'], every: '1s' } }), leaseMs: 1000 };
    const broker = createBroker(inject('redisUrl'), { namespace, logger: silent });
    await broker.connect();
    try {
      const first = await startNode(both, ledger, 'schedule-node.mjs');
      await expect.poll(() => ticks(ledger, 'removed').length, { timeout: 60_000 }).toBeGreaterThanOrEqual(1);
      await stop(first);
      const removedFired = ticks(ledger, 'removed').length;
      const second = await startNode(one, ledger, 'schedule-node.mjs');
      await expect
        .poll(async () => (await broker.listSchedule()).map((s) => s.name), { timeout: 60_000 })
        .toEqual(['kept']);
      const keptNow = ticks(ledger, 'kept').length;
      await expect.poll(() => ticks(ledger, 'kept').length, { timeout: 60_000 }).toBeGreaterThan(keptNow + 1);
      await stop(second);
      expect(ticks(ledger, 'removed')).toHaveLength(removedFired);
    } finally {
      await broker.close();
    }
  });
});
