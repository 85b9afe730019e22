/**
 * The node's side of rate limits (RateGate) over the memory broker's
 * buckets: which jobs a limit governs, that a job holding its turn starts
 * without asking again unless it comes late, and the turns a batch gets.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createBroker } from '../../../dist/broker/index.js';
import type { Broker, Delivery, JobRecord } from '../../../dist/broker/types.js';
import { RateGate } from '../../../dist/consumer/rate-gate.js';
import type { TaskOptions } from '../../../dist/job-types.js';
import { silent } from '../../helpers/worker.js';

const TASKS = new Map<string, TaskOptions>([['limited', { rateLimit: '2/s' }]]);
const open: Broker[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((b) => b.close()));
});

async function gate(): Promise<RateGate> {
  const broker = createBroker(`memory://rate-gate-${randomUUID()}`, { logger: silent });
  open.push(broker);
  await broker.connect();
  return new RateGate(broker, (task) => TASKS.get(task), silent);
}

function job(task: string, extra: Partial<JobRecord> = {}): JobRecord {
  return {
    id: randomUUID(),
    task,
    queue: 'q',
    payload: new Uint8Array(0),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: Date.now(),
    ...extra,
  };
}

describe('RateGate', () => {
  it("governs a job by its task's rate, its own, or the rate set at run time, in that order of weight", async () => {
    const g = await gate();
    expect(g.intervalOf(job('plain'))).toBeUndefined();
    expect(g.intervalOf(job('limited'))).toBe(500);
    expect(g.intervalOf(job('plain', { options: { rateLimit: '10/s' } }))).toBe(100);
    expect(g.intervalOf(job('limited', { options: { rateLimit: '10/s' } }))).toBe(100);
    g.follow('limited', '1/m');
    expect(g.intervalOf(job('limited', { options: { rateLimit: '10/s' } }))).toBe(60_000);
    g.follow('limited', 'off');
    expect(g.intervalOf(job('limited'))).toBeUndefined();
  });

  it('a job holding its turn starts without asking again; one that comes late asks for a new turn', async () => {
    const g = await gate();
    expect(g.intervalOf(job('limited', { rateSlot: Date.now() }))).toBeUndefined();
    // Every node was busy when its turn came: starting it now could bunch it with the next turns.
    expect(g.intervalOf(job('limited', { rateSlot: Date.now() - 5_000 }))).toBe(500);
    // With the limit off, late or not, it starts.
    g.follow('limited', 'off');
    expect(g.intervalOf(job('limited', { rateSlot: Date.now() - 5_000 }))).toBeUndefined();
  });

  it('a batch gets turns one interval apart: the first starts, the others wait holding theirs', async () => {
    const g = await gate();
    const deliveries: Delivery[] = [0, 1, 2].map((i) => ({ receipt: `r${i}`, queue: 'q', job: job('limited') }));
    const { start, wait } = await g.admit(deliveries.map((delivery) => ({ delivery, intervalMs: 500 })));
    expect(start).toEqual([deliveries[0]]);
    expect(wait.map((w) => [w.delivery, w.slot])).toEqual([
      [deliveries[1], true],
      [deliveries[2], true],
    ]);
    expect(wait[1]!.delay - wait[0]!.delay).toBe(500);
  });

  it('a bad rate set at run time is refused, naming it', async () => {
    const g = await gate();
    expect(() => g.follow('limited', 'fast')).toThrow(/rateLimit: "fast"/);
  });
});
