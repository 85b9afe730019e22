/**
 * The node's wall clock stepped back (NTP or chrony correcting a clock that
 * ran ahead) while its schedule sleeps until the next tick. Ticks fall on
 * the broker's clock, which did not move: the node must go on claiming them
 * on time, not sleep for as long as the step before asking the broker again.
 */
import { describe, expect, it } from 'vitest';
import type { Broker } from '../../dist/broker/types.js';
import { defineSchedule } from '../../dist/schedule/define.js';
import { Scheduler } from '../../dist/schedule/scheduler.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';
import { silent } from '../helpers/worker.js';
import { waitUntil } from '../helpers/wait.js';

/** The ticks the claims through `b` fired, in order. */
function recordFired(b: Broker): number[] {
  const fired: number[] = [];
  const claim = b.claimTicks.bind(b);
  b.claimTicks = async (claims) => {
    const reply = await claim(claims);
    reply.results.forEach(({ outcome }, i) => {
      if (outcome === 'claimed') fired.push(...(claims[i]?.jobs ?? []).map((j) => j.scheduledFor ?? 0));
    });
    return reply;
  };
  return fired;
}

describe("a node's wall clock stepped back under its schedule, over redis", () => {
  const { broker } = eachBrokerScope('redis', 'clockstep');

  it('fires the next ticks on time, each once, none skipped', async () => {
    const b = await broker();
    const fired = recordFired(b);
    const scheduler = new Scheduler(b, defineSchedule({ beat: { task: 'tick', every: '1s', misfire: 'all' } }), silent);
    const wallClock = Date.now;
    try {
      scheduler.start();
      await waitUntil(() => fired.length >= 2, 'ticks fire');
      // A clock that ran ten minutes ahead, stepped back to the truth.
      Date.now = () => wallClock.call(Date) - 600_000;
      const before = fired.length;
      await waitUntil(() => fired.length >= before + 3, 'ticks fire after the step');
    } finally {
      Date.now = wallClock;
      await scheduler.stop();
    }
    expect(fired.slice(1).map((tick, i) => tick - (fired[i] ?? 0))).toEqual(fired.slice(1).map(() => 1000));
  });
});
