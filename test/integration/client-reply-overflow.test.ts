import { afterEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client } from 'prefork';
import { createBroker } from 'prefork/broker';
import type { Broker, Delivery, ResultRecord } from '../../dist/broker/types.js';
import { log, Scope } from './redis-helpers.js';

/**
 * A client that falls behind its reply list: more than the list's cap
 * (10,000 ids) of newer results are announced before it reads the id of the
 * job it waits for, so that id is dropped. The waiter must still settle.
 * The client's blocking read is held back by a gate (a slow client), and the
 * waiter starts before the job settles (just after its enqueue, it takes no
 * first look at the stored result: only the overflow's re-read can find it).
 */
const OVER_CAP = 10_010;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function strandedWaiter(clientBroker: Broker, workerBroker: Broker): Promise<unknown> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let listening!: () => void;
  const blocked = new Promise<void>((resolve) => (listening = resolve));
  const realWait = clientBroker.waitForResults.bind(clientBroker);
  clientBroker.waitForResults = async (...args) => {
    listening();
    await gate;
    return realWait(...args);
  };

  const client = new Client({ broker: clientBroker, logger: log });
  cleanups.push(() => client.close());
  await workerBroker.register({
    id: 'n',
    name: 'n@test',
    host: 'test',
    pid: process.pid,
    queues: ['default'],
    concurrency: '1',
    startedAt: Date.now(),
  });
  const handles = await client.enqueueMany(Array.from({ length: OVER_CAP }, () => ({ name: 'add' })));
  const target = handles[0]!;
  const waiting = target.result({ timeout: '20s' });
  waiting.catch(() => undefined);
  await blocked;
  expect((await clientBroker.getResult(target.id))?.state ?? 'PENDING').toBe('PENDING');

  const deliveries: Delivery[] = [];
  while (deliveries.length < OVER_CAP) {
    const reply = await workerBroker.fetch({
      nodeId: 'n',
      plan: [{ queue: 'default', quota: 1000 }],
      count: 1000,
      settle: [],
    });
    deliveries.push(...reply.deliveries);
  }
  expect(deliveries[0]!.job.id).toBe(target.id);
  // The target's announcement goes first, so it is the oldest: the one dropped.
  await workerBroker.settle(
    deliveries.map((d) => {
      const result: ResultRecord = {
        id: d.job.id,
        task: d.job.task,
        queue: d.queue,
        state: 'SUCCESS',
        value: d.job.id === target.id ? 'the target' : 'other',
        retries: 0,
      };
      return { kind: 'ack' as const, delivery: d, result };
    }),
  );
  release();
  return waiting;
}

describe('Client: a waiter whose announcement the full reply list dropped', () => {
  it('settles with its result on Redis', async () => {
    const scope = new Scope();
    cleanups.push(() => scope.cleanup());
    const clientBroker = await scope.broker({ resultTtl: 60_000 });
    const workerBroker = await scope.broker({ resultTtl: 60_000 });
    expect(await strandedWaiter(clientBroker, workerBroker)).toBe('the target');
  });

  it('settles with its result on the memory broker', async () => {
    const broker = createBroker(`memory://reply-overflow-${randomUUID()}`, { logger: log });
    await broker.connect();
    cleanups.push(() => broker.close());
    expect(await strandedWaiter(broker, broker)).toBe('the target');
  });
});
