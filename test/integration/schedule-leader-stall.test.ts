/**
 * The leader's housekeeping (dropping the schedule entries no live node
 * runs) against a stall: a leader whose replies stop coming between reading
 * the stored entries and reading the live nodes, for longer than the lease,
 * finds no live node when they come back (its own lease lapsed meanwhile).
 * It must not drop the entries it runs itself: a dropped entry is stored
 * again from now, and the ticks missed in the stall would be lost whatever
 * its `misfire` says.
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { defineSchedule } from 'prefork';
import { createBroker } from 'prefork/broker';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { cleanup, fixture, makeWorker, newLedger, silent, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

/** The ticks the ledger's jobs stand for, label `beat`, in order (one line per run). */
function beats(ledger: string): number[] {
  let text: string;
  try {
    text = readFileSync(ledger, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.startsWith('beat '))
    .map((line) => Number(line.split(' ')[1]))
    .sort((a, b) => a - b);
}

async function redisNow(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

describe('the leader stalled past its lease in the middle of its housekeeping', () => {
  it("drops no entry it runs: misfire 'all' fires every tick missed in the stall", async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('sched');
    const ledger = newLedger();
    const proxy = await TcpProxy.start(url);
    const redis = new Redis(url);
    const broker = createBroker(url, { namespace, logger: silent });
    await broker.connect();
    try {
      const worker = makeWorker({
        broker: proxy.url,
        namespace,
        app: fixture('tasks-schedule.mjs'),
        ledger,
        concurrency: 1,
        lease: 1000,
        schedule: defineSchedule({ beat: { task: 'tick', args: ['beat'], every: '1s', misfire: 'all' } }),
      });
      await worker.start();
      await expect.poll(() => beats(ledger).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
      await expect.poll(async () => (await broker.leader())?.nodeId, { timeout: 30_000 }).toBe(worker.nodeId);
      // The housekeeping reads the stored entries (SMEMBERS {ns}:schedules) first: its reply, and
      // every reply after it, is held until the node's lease has lapsed on Redis's clock.
      await proxy.holdRepliesAfter(':schedules');
      const nodes = `{${namespace}}:nodes`;
      await expect
        .poll(async () => Number((await redis.zscore(nodes, worker.nodeId)) ?? 0) < (await redisNow(redis)), {
          timeout: 30_000,
          interval: 100,
        })
        .toBe(true);
      proxy.releaseReplies();
      const released = await redisNow(redis);
      await expect
        .poll(() => beats(ledger).filter((t) => t > released + 2000).length, { timeout: 30_000 })
        .toBeGreaterThanOrEqual(1);
      expect(await redis.sismember(`{${namespace}}:schedules`, 'beat')).toBe(1);
      await worker.stop();
    } finally {
      redis.disconnect();
      await broker.close();
      await proxy.close();
    }
    const fired = [...new Set(beats(ledger))];
    const gaps = fired.slice(1).filter((t, i) => t - fired[i]! !== 1000);
    expect(gaps, JSON.stringify(fired)).toEqual([]);
  });
});
