/**
 * The HoardGuard's give-back through a real Consumer, Pool and memory://
 * broker: jobs held past the prefetch's give-back line go back to their
 * queue as `spread` (no redelivery counted), come back, and every job runs
 * once. The prefetch here is a test double whose line is 2, so the guard
 * acts on the first look, whatever the machine's speed.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from 'prefork';
import { createBroker, type Broker, type Delivery, type Settlement } from 'prefork/broker';
import { Consumer } from '../../dist/consumer/consumer.js';
import type { Prefetch } from '../../dist/consumer/prefetch.js';
import { QueueSelection, parseQueues } from '../../dist/consumer/queue-selection.js';
import { RateGate } from '../../dist/consumer/rate-gate.js';
import { fixture, release, startPool, terminatePools } from '../helpers/pool.js';
import { silent, uniqueName } from '../helpers/worker.js';

/** Holds up to 8 jobs; past 2, what waited is given back (the allowance of a node of quick jobs, made certain). */
class EagerPrefetch implements Prefetch {
  readonly limit = 8;
  readonly giveBackAbove = 2;
  /** While false, nothing is given back (a test arranges the buffer first). */
  armed = true;
  sent(): void {}
  settled(): void {}
  replied(): void {}
  resize(): void {}
  gaveBack(): void {}
  excess(reserved: number): number {
    return this.armed ? Math.max(0, reserved - this.giveBackAbove) : 0;
  }
}

let dir: string;
const closers: (() => Promise<unknown>)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'prefork-spread-'));
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await terminatePools();
  rmSync(dir, { recursive: true, force: true });
});

/** A Consumer of queue q on a one-child fair pool and a memory:// broker, with the given prefetch double. */
async function startNode(prefetch: EagerPrefetch) {
  const url = `memory://${uniqueName('spread')}`;
  const broker: Broker = createBroker(url, { logger: silent });
  await broker.connect();
  closers.push(() => broker.close());
  const nodeId = 'n1';
  await broker.register({
    id: nodeId,
    name: nodeId,
    host: 'h',
    pid: 1,
    queues: ['q'],
    concurrency: '1',
    startedAt: 0,
  });
  const client = new Client({ broker, logger: silent });
  closers.push(() => client.close());
  const pool = await startPool({ app: fixture('tasks-marks.mjs'), processes: 1, strategy: 'fair' });
  const consumer = new Consumer({
    broker,
    pool,
    selection: new QueueSelection(parseQueues('q'), 'round-robin'),
    rates: new RateGate(broker, () => undefined, silent),
    nodeId: () => nodeId,
    nodeName: nodeId,
    prefetch,
    trackStarted: false,
    stallAfterMs: 60_000,
    log: silent,
  });
  const received: Delivery[] = [];
  const givenBack: Settlement[] = [];
  consumer.observe({
    received: (d) => received.push(d),
    settled: (s) => {
      if (s.kind === 'giveBack') givenBack.push(s);
    },
  });
  return { client, pool, consumer, received, givenBack };
}

describe('HoardGuard give-back through the Consumer', () => {
  it('gives jobs back as spread: they keep their redeliveries, come back, and each runs once', async () => {
    const { client, pool, consumer, received, givenBack } = await startNode(new EagerPrefetch());
    // One job blocks the only child; six wait behind it in the pool's buffer.
    await client.enqueue('markAndBlock', [dir, 'job-0'], { queue: 'q', ignoreResult: true });
    for (let i = 1; i <= 6; i++) await client.enqueue('mark', [dir, `job-${i}`], { queue: 'q', ignoreResult: true });
    consumer.start();
    closers.push(() => consumer.stopFetching());
    await expect
      .poll(() => givenBack.length, { message: 'the guard to give back what waits past the line' })
      .toBeGreaterThan(0);
    for (const s of givenBack) expect(s).toMatchObject({ kind: 'giveBack', spread: true });
    // Given back and fetched again: not a redelivery.
    await expect
      .poll(() => received.filter((d) => givenBack.some((s) => s.delivery.job.id === d.job.id)).length)
      .toBeGreaterThan(0);
    for (const d of received) expect(d.job.redeliveries).toBe(0);
    const [pid] = pool.stats().processes.map((p) => p.pid);
    release(pid as number);
    await expect.poll(() => readdirSync(dir).length, { message: 'every job to run' }).toBe(7);
    await expect.poll(() => pool.stats().totals.done).toBe(7);
    expect(readdirSync(dir).sort()).toEqual(['job-0', 'job-1', 'job-2', 'job-3', 'job-4', 'job-5', 'job-6']);
  });

  it('takes back only its own jobs: one applied straight to the pool runs', async () => {
    const prefetch = new EagerPrefetch();
    prefetch.armed = false;
    const { client, pool, consumer, received, givenBack } = await startNode(prefetch);
    await client.enqueue('markAndBlock', [dir, 'job-0'], { queue: 'q', ignoreResult: true });
    for (let i = 1; i <= 4; i++) await client.enqueue('mark', [dir, `job-${i}`], { queue: 'q', ignoreResult: true });
    consumer.start();
    closers.push(() => consumer.stopFetching());
    await expect.poll(() => received.length, { message: 'the node to hold every queued job' }).toBe(5);
    // Last in the pool's buffer, so first in line to be taken back, were it the queues' to take.
    const direct = pool.apply('mark', [dir, 'direct']);
    prefetch.armed = true;
    await expect.poll(() => givenBack.length, { message: 'the guard to give back queue jobs' }).toBeGreaterThan(0);
    for (const s of givenBack) expect(s.delivery.job.task).toBe('mark');
    const [pid] = pool.stats().processes.map((p) => p.pid);
    release(pid as number);
    await expect(direct).resolves.toBe('direct');
    await expect.poll(() => readdirSync(dir).length, { message: 'every job to run' }).toBe(6);
    expect(readdirSync(dir).sort()).toEqual(['direct', 'job-0', 'job-1', 'job-2', 'job-3', 'job-4']);
  });
});
