import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import '../setup/provided.js';
import { createBroker } from '../../dist/broker/index.js';
import type { Broker } from '../../dist/broker/types.js';
import { job, log } from './redis-helpers.js';

/**
 * This process's clock set 10 s off Redis's (Date.now shifted; Redis keeps
 * its own TIME). Due times of delayed jobs are counted on the broker's clock;
 * what the broker reports must be on this process's clock, or a node that is
 * ahead busy-loops on a job it thinks is due and a node that is behind runs
 * it late.
 */
const SKEW = 10_000;
const realNow = Date.now.bind(Date);
const open: Broker[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((b) => b.close()));
});

function skew(ms: number): void {
  vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
}

async function broker(kind: 'memory' | 'redis', ns: string): Promise<Broker> {
  const b = createBroker(kind === 'memory' ? `memory://skew-${ns}` : inject('redisUrl'), {
    namespace: ns,
    logger: log,
  });
  open.push(b);
  await b.connect();
  await b.register({ id: 'n1', name: 'n1', host: 'h', pid: 1, queues: ['q'], concurrency: '1', startedAt: 0 });
  return b;
}

describe.each(['memory', 'redis'] as const)('clock skew between this process and the broker (%s)', (kind) => {
  it.each([SKEW, -SKEW])(
    'with this clock off by %d ms, fetch and heartbeat report due times on this clock',
    async (offset) => {
      skew(offset);
      const b = await broker(kind, `k${randomUUID().slice(0, 8)}`);
      await b.enqueue([job('q', { delay: 5_000 })]);
      const reply = await b.fetch({ nodeId: 'n1', plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
      expect(reply.deliveries).toEqual([]);
      const left = reply.nextDueAt! - Date.now();
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(5_000);
      const beat = await b.heartbeat('n1', ['q']);
      expect(beat.nextDueAt! - Date.now()).toBeGreaterThan(0);
      expect(beat.nextDueAt! - Date.now()).toBeLessThanOrEqual(5_000);
    },
  );

  it('a node whose clock is behind still gets a delayed job enqueued while it blocks, within the wait', async () => {
    skew(-SKEW);
    const b = await broker(kind, `k${randomUUID().slice(0, 8)}`);
    const waiting = b.waitForWork('n1', ['q'], 5_000, new AbortController().signal, 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const j = job('q', { delay: 300 });
    await b.enqueue([j]);
    const reply = await waiting;
    expect(reply.deliveries.map((d) => d.job.id)).toEqual([j.id]);
  });
});

describe('clock skew (redis): no busy loop', () => {
  it('a node whose clock is ahead waits for a delayed job with a few fetches, not one per millisecond', async () => {
    skew(SKEW);
    const ns = `k${randomUUID().slice(0, 8)}`;
    const b = await broker('redis', ns);
    // Count the fetch script calls of this namespace as Redis sees them.
    const monitor = await new Redis(inject('redisUrl')).monitor();
    let fetches = 0;
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (/^eval/i.test(args[0] ?? '') && args[3] === `{${ns}}:nodes` && args.includes(`{${ns}}:q:q`)) fetches++;
    });
    try {
      const j = job('q', { delay: 500 });
      await b.enqueue([j]);
      const reply = await b.waitForWork('n1', ['q'], 5_000, new AbortController().signal, 1);
      expect(reply.deliveries.map((d) => d.job.id)).toEqual([j.id]);
      expect(fetches).toBeGreaterThan(0);
      expect(fetches).toBeLessThanOrEqual(6);
    } finally {
      monitor.disconnect();
    }
  });
});
