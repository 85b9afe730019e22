import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, type ResultRecord } from 'prefork';
import type { Broker, Delivery } from '../../dist/broker/types.js';

/**
 * Results announced to a Client, on the memory broker: a worker is played
 * here by fetching and settling through the broker, so announcements can be
 * repeated at will (as a redelivered job that ran twice repeats them).
 */
const silent = pino({ level: 'silent' });
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function setup(): Promise<{
  client: Client;
  finish: (d: Delivery, value?: unknown) => Promise<void>;
  take: (n: number) => Promise<Delivery[]>;
}> {
  const client = new Client({ broker: `memory://client-results-${randomUUID()}`, logger: silent });
  clients.push(client);
  const broker = client.broker as Broker;
  await broker.register({ id: 'n', name: 'n', host: 'h', pid: 1, queues: ['default'], concurrency: '1', startedAt: 0 });
  const take = async (n: number): Promise<Delivery[]> =>
    (await broker.fetch({ nodeId: 'n', plan: [{ queue: 'default', quota: n }], count: n, settle: [] })).deliveries;
  const finish = async (d: Delivery, value: unknown = d.job.id): Promise<void> => {
    const result: ResultRecord = {
      id: d.job.id,
      task: d.job.task,
      queue: d.queue,
      state: 'SUCCESS',
      value,
      retries: 0,
    };
    await broker.settle([{ kind: 'ack', delivery: d, result }]);
  };
  return { client, finish, take };
}

/** The records the client keeps for waiters yet to come (internal: nothing else shows it). */
function parked(client: Client): number {
  return (client as unknown as { arrived: Map<string, unknown> }).arrived.size;
}

describe('Client: results announced to it', () => {
  it('a second announcement of a result already handed over is dropped, not kept', async () => {
    const { client, finish, take } = await setup();
    const first = await client.enqueue('t');
    const [d1] = await take(1);
    await finish(d1!);
    expect(await first.result({ timeout: '5s' })).toBe(first.id);

    // The same result announced again (the job ran twice), then another job's result.
    await finish(d1!);
    const second = await client.enqueue('t');
    const [d2] = await take(1);
    await finish(d2!);
    expect(await second.result({ timeout: '5s' })).toBe(second.id);
    expect(parked(client)).toBe(0);
    // Waiting again for the first job still works: its result is read from the store.
    expect(await first.result({ timeout: '5s' })).toBe(first.id);
  });

  it('a result announced before anyone waits is kept for the waiter that comes', async () => {
    const { client, finish, take } = await setup();
    const [early, waited] = await client.enqueueMany([{ name: 't' }, { name: 't' }]);
    const ds = await take(2);
    for (const d of ds) await finish(d);
    expect(await waited!.result({ timeout: '5s' })).toBe(waited!.id);
    expect(parked(client)).toBe(1);
    expect(await early!.result({ timeout: '5s' })).toBe(early!.id);
    expect(parked(client)).toBe(0);
  });

  it('results nobody waits for are kept up to a bound, never without one', async () => {
    const { client, finish, take } = await setup();
    const handles = await client.enqueueMany(Array.from({ length: 1_500 }, () => ({ name: 't' })));
    for (const d of await take(1_500)) await finish(d);
    const last = await client.enqueue('t');
    const [d] = await take(1);
    await finish(d!);
    expect(await last.result({ timeout: '5s' })).toBe(last.id);
    expect(parked(client)).toBeLessThanOrEqual(1_000);
    // One pushed out of the bound is still found: waiting reads the stored result.
    expect(await handles[0]!.result({ timeout: '5s' })).toBe(handles[0]!.id);
  });
});
