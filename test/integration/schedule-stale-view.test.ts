/**
 * A scheduler that stopped watching comes back with a stale view of its
 * entries: the latest tick it saw fired is older than those another node
 * fired meanwhile. If the entries' state vanished meanwhile (Redis lost its
 * data, the leader dropped it), that view must not be stored again: the
 * ticks the other node fired would fire again. It stores them from now;
 * each tick is claimed at most once. Stopped between steps (as a paused
 * node is), or in the middle of one: its claim built but not yet at the
 * broker, or its reply on the way back (SIGSTOP, a blocked event loop),
 * where its timer fired on time and only the step's own length shows it.
 */
import { describe, expect, it } from 'vitest';
import type { Broker, TickClaim } from '../../dist/broker/types.js';
import { defineSchedule } from '../../dist/schedule/define.js';
import { Scheduler } from '../../dist/schedule/scheduler.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';
import { silent } from '../helpers/worker.js';

type Held = 'before the claim reaches the broker' | 'with its reply on the way back';

/**
 * Records the ticks each entry's claims fired through `b`; `hold(where)`
 * holds the next claim at that point until `release()`, and resolves once
 * one is held.
 */
function watchClaims(b: Broker, fired: Map<string, number[]>) {
  let armed: Held | undefined;
  let caught: (() => void) | undefined;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const claim = b.claimTicks.bind(b);
  b.claimTicks = async (claims: TickClaim[]) => {
    const held = armed;
    armed = undefined;
    if (held !== undefined) caught?.();
    if (held === 'before the claim reaches the broker') await released;
    const reply = await claim(claims);
    if (held === 'with its reply on the way back') await released;
    reply.results.forEach(({ outcome }, i) => {
      const c = claims[i];
      if (outcome !== 'claimed' || c === undefined) return;
      fired.set(c.name, [...(fired.get(c.name) ?? []), ...c.jobs.map((j) => j.scheduledFor ?? 0)]);
    });
    return reply;
  };
  return {
    hold: (where: Held): Promise<void> => {
      armed = where;
      return new Promise<void>((resolve) => (caught = resolve));
    },
    release: (): void => release(),
  };
}

describe.each(['memory', 'redis'] as const)('a stale scheduler finding its entries gone, over %s', (kind) => {
  const { broker } = eachBrokerScope(kind, 'stale');

  /** Two schedulers of the same entries on their own handles; `last`: the latest tick of the entry behind (0 before both are stored). */
  async function twoNodes() {
    const fired = new Map<string, number[]>();
    const [ba, bb] = [await broker(), await broker()];
    watchClaims(ba, fired);
    const claimsOfB = watchClaims(bb, fired);
    const schedule = defineSchedule({
      all: { task: 'tick', every: '1s', misfire: 'all' },
      once: { task: 'tick', every: '1s', misfire: 'once' },
    });
    const last = async (): Promise<number> => {
      const states = await ba.listSchedule();
      return states.length < 2 ? 0 : Math.min(...states.map((s) => s.last));
    };
    const a = new Scheduler(ba, schedule, silent);
    const b = new Scheduler(bb, schedule, silent);
    /** The state vanishes while a is stopped; b, back first, stores it; then a fires on with it. */
    const loseStateThenResume = async (backFirst: () => void): Promise<void> => {
      await a.stop();
      await ba.dropSchedule(['all', 'once']);
      backFirst();
      await expect.poll(async () => (await ba.listSchedule()).length, { timeout: 10_000 }).toBe(2);
      a.start();
      const backAt = await last();
      await expect.poll(last, { timeout: 10_000 }).toBeGreaterThanOrEqual(backAt + 2_000);
    };
    const expectEachTickOnce = (): void => {
      for (const name of ['all', 'once']) {
        const ticks = fired.get(name) ?? [];
        expect(ticks.length).toBeGreaterThan(0);
        expect(
          ticks.filter((t, i) => ticks.indexOf(t) !== i),
          `${name}: ticks fired twice`,
        ).toEqual([]);
      }
    };
    return { a, b, last, claimsOfB, loseStateThenResume, expectEachTickOnce };
  }

  it('stopped between steps: stores them from now, none of the ticks the other node fired fires again', async () => {
    const { a, b, last, loseStateThenResume, expectEachTickOnce } = await twoNodes();
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
      await loseStateThenResume(() => b.start());
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    expectEachTickOnce();
  });

  it.each<Held>(['before the claim reaches the broker', 'with its reply on the way back'])(
    'stopped mid-step, held %s: none of the ticks the other node fired fires again',
    async (held) => {
      const { a, b, last, claimsOfB, loseStateThenResume, expectEachTickOnce } = await twoNodes();
      try {
        b.start();
        await expect.poll(last).toBeGreaterThan(0);
        // b's next step is held; a fires three ticks meanwhile.
        await claimsOfB.hold(held);
        const heldAt = await last();
        a.start();
        await expect.poll(last, { timeout: 10_000 }).toBeGreaterThanOrEqual(heldAt + 3_000);
        await loseStateThenResume(() => claimsOfB.release());
      } finally {
        claimsOfB.release();
        await Promise.all([a.stop(), b.stop()]);
      }
      expectEachTickOnce();
    },
  );
});
