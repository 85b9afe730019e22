/**
 * A node stopped (SIGSTOP, a blocked event loop) in the middle of a step:
 * its claim built but not yet at the broker, or its reply on the way back.
 * Its timer fired on time, so only the step's own length shows it was not
 * watching. Meanwhile another node fires ticks, and the entries' state
 * vanishes (Redis lost its data). Back, the node must not store its view
 * again (the ticks the other node fired would fire twice): it stores the
 * entries from now. Each tick is claimed at most once.
 */
import { describe, expect, it } from 'vitest';
import type { Broker, TickClaim } from '../../dist/broker/types.js';
import { defineSchedule } from '../../dist/schedule/define.js';
import { Scheduler } from '../../dist/schedule/scheduler.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';
import { silent } from '../helpers/worker.js';

type Held = 'before the claim reaches the broker' | 'with its reply on the way back';

/**
 * Records the ticks each entry's claims fired through `b`, and holds the
 * first claim made after `hold()` at the point `held` names until `release()`.
 */
function gate(b: Broker, fired: Map<string, number[]>, held: Held) {
  let armed = false;
  let caught: (() => void) | undefined;
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const claim = b.claimTicks.bind(b);
  b.claimTicks = async (claims: TickClaim[]) => {
    const holding = armed;
    armed = false;
    if (holding) caught?.();
    if (holding && held === 'before the claim reaches the broker') await released;
    const reply = await claim(claims);
    if (holding && held === 'with its reply on the way back') await released;
    reply.results.forEach(({ outcome }, i) => {
      const c = claims[i];
      if (outcome !== 'claimed' || c === undefined) return;
      fired.set(c.name, [...(fired.get(c.name) ?? []), ...c.jobs.map((j) => j.scheduledFor ?? 0)]);
    });
    return reply;
  };
  return {
    /** Resolves once a claim is held. */
    hold: (): Promise<void> => {
      armed = true;
      return new Promise<void>((resolve) => (caught = resolve));
    },
    release: (): void => release(),
  };
}

describe.each(['memory', 'redis'] as const)('a scheduler stopped mid-step, over %s', (kind) => {
  const { broker } = eachBrokerScope(kind, 'midstep');

  it.each<Held>(['before the claim reaches the broker', 'with its reply on the way back'])(
    'held %s, then finding its entries gone: none of the ticks the other node fired fires again',
    async (held) => {
      const fired = new Map<string, number[]>();
      const [ba, bb] = [await broker(), await broker()];
      gate(ba, fired, held);
      const gb = gate(bb, fired, held);
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
        b.start();
        await expect.poll(last).toBeGreaterThan(0);
        // b's next step is held; a fires three ticks meanwhile.
        await gb.hold();
        const heldAt = await last();
        a.start();
        await expect.poll(last, { timeout: 10_000 }).toBeGreaterThanOrEqual(heldAt + 3_000);
        await a.stop();
        await ba.dropSchedule(['all', 'once']);
        gb.release();
        await expect.poll(async () => (await ba.listSchedule()).length, { timeout: 10_000 }).toBe(2);
        a.start();
        const backAt = await last();
        await expect.poll(last, { timeout: 10_000 }).toBeGreaterThanOrEqual(backAt + 2_000);
      } finally {
        gb.release();
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
    },
  );
});
