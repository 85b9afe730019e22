/**
 * Redis frozen (SIGSTOP, a paused VM) under a node whose schedule has a
 * claim on the wire. A node's calls have no timeout, so the claim waits for
 * as long as Redis is frozen; a warm stop must not: it ends as a node's stop
 * does while Redis is frozen, and the claim it left, failed by the broker's
 * close, is not reported as a failure after "worker stopped".
 */
import { describe, expect, it } from 'vitest';
import { createBroker } from '../../dist/broker/index.js';
import type { Broker } from '../../dist/broker/types.js';
import { defineSchedule } from '../../dist/schedule/define.js';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { captureLog, fixture, makeWorker, silent, uniqueName } from '../helpers/worker.js';

const own = ownRedisPerTest();

describe('a node whose schedule claim is on the wire when Redis freezes', () => {
  it('stops warm while Redis is still frozen, and logs no warning after it stopped', { timeout: 60_000 }, async () => {
    const broker: Broker = createBroker(own.server.url, { namespace: uniqueName('frozen'), logger: silent });
    await broker.connect();
    // Freezes Redis as the first claim after a tick fired goes out: that claim is then on the wire.
    let fired = false;
    let frozen!: () => void;
    const onWire = new Promise<void>((resolve) => (frozen = resolve));
    const claim = broker.claimTicks.bind(broker);
    broker.claimTicks = async (claims) => {
      if (fired) {
        own.server.pause();
        frozen();
      }
      const reply = await claim(claims);
      if (reply.results.some((r) => r.outcome === 'claimed')) fired = true;
      return reply;
    };
    const { log, lines } = captureLog();
    const worker = makeWorker({
      app: fixture('tasks-schedule.mjs'),
      broker,
      concurrency: 1,
      logger: log,
      schedule: defineSchedule({ beat: { task: 'tick', args: ['beat'], every: '1s' } }),
    });
    try {
      await worker.start();
      await onWire;
      const stopping = worker.stop();
      expect(
        await Promise.race([
          stopping.then(() => 'stopped'),
          new Promise((resolve) => setTimeout(resolve, 40_000, 'still stopping')),
        ]),
      ).toBe('stopped');
      // Closed while Redis is frozen, as a node closes the broker it opened: the claim on it fails.
      await broker.close();
      await expect.poll(() => lines.some((l) => l.component === 'schedule' && l.err !== undefined)).toBe(true);
    } finally {
      own.server.resume();
      await broker.close();
    }
    const stopped = lines.findIndex((l) => l.msg === 'worker stopped');
    expect(stopped).toBeGreaterThan(-1);
    expect(lines.slice(stopped + 1).filter((l) => Number(l.level) >= 40)).toEqual([]);
  });
});
