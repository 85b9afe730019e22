/**
 * A scheduler that stopped watching (stopped, as a paused node is) comes
 * back with a stale view of its entries: the latest tick it saw fired is
 * older than those another node fired meanwhile. If the entries' state
 * vanished meanwhile (Redis lost its data, the leader dropped it), that view
 * must not be stored again: the ticks the other node fired would fire again.
 * It stores them from now; each tick is claimed at most once.
 */
import { describe, expect, it } from 'vitest';
import type { Broker } from '../../dist/broker/types.js';
import { defineSchedule } from '../../dist/schedule/define.js';
import { Scheduler } from '../../dist/schedule/scheduler.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';
import { silent } from '../helpers/worker.js';

/** The ticks each entry's claims fired through `b`, by entry. */
function recordFired(b: Broker, fired: Map<string, number[]>): void {
  const claim = b.claimTicks.bind(b);
  b.claimTicks = async (claims) => {
    const reply = await claim(claims);
    reply.results.forEach(({ outcome }, i) => {
      const c = claims[i];
      if (outcome !== 'claimed' || c === undefined) return;
      fired.set(c.name, [...(fired.get(c.name) ?? []), ...c.jobs.map((j) => j.scheduledFor ?? 0)]);
    });
    return reply;
  };
}

describe.each(['memory', 'redis'] as const)('a stale scheduler finding its entries gone, over %s', (kind) => {
  const { broker } = eachBrokerScope(kind, 'stale');

  it('stores them from now: none of the ticks the other node fired fires again', async () => {
    const fired = new Map<string, number[]>();
    const [ba, bb] = [await broker(), await broker()];
    recordFired(ba, fired);
    recordFired(bb, fired);
    const schedule = defineSchedule({
      all: { task: 'tick', every: '1s', misfire: 'all' },
      once: { task: 'tick', every: '1s', misfire: 'once' },
    });
    const a = new Scheduler(ba, schedule, silent);
    const b = new Scheduler(bb, schedule, silent);
    /** The latest tick handled of the entry behind, 0 before both are stored. */
    const last = async (): Promise<number> => {
      const states = await ba.listSchedule();
      return states.length < 2 ? 0 : Math.min(...states.map((s) => s.last));
    };
    try {
      a.start();
      b.start();
      // b has stored the entries and seen a tick fired.
      await expect.poll(last).toBeGreaterThan(0);
      const firstAt = await last();
      await expect.poll(last).toBeGreaterThan(firstAt);
      await b.stop();
      const leftAt = await last();
      // a fires three ticks while b is away; then the state vanishes, and b comes back first.
      await expect.poll(last, { timeout: 10_000 }).toBeGreaterThanOrEqual(leftAt + 3_000);
      await a.stop();
      await ba.dropSchedule(['all', 'once']);
      b.start();
      await expect.poll(async () => (await ba.listSchedule()).length, { timeout: 10_000 }).toBe(2);
      a.start();
      const backAt = await last();
      await expect.poll(last, { timeout: 10_000 }).toBeGreaterThanOrEqual(backAt + 2_000);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    for (const name of ['all', 'once']) {
      const ticks = fired.get(name) ?? [];
      expect(ticks.length).toBeGreaterThan(0);
      expect(
        ticks.filter((t, i) => ticks.indexOf(t) !== i),
        `${name}: ticks fired twice`,
      ).toEqual([]);
    }
  });
});
