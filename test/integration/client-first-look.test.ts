import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client, type JobHandle } from 'prefork';
import { createBroker, type Broker } from 'prefork/broker';
import { Keys } from '../../dist/broker/redis/keys.js';
import type { Delivery, ResultRecord } from '../../dist/broker/types.js';
import { log, registerNode, Scope } from './redis-helpers.js';

/**
 * A Client waiting for a job it has just enqueued takes no first look at the
 * stored result: the announcement is what it waits for. It looks when the
 * wait is not the handle's first, when the job was enqueued more than a
 * second before, or when a result parked for a later waiter was pushed out
 * since; and a wait that skipped its look reads the stored result after a
 * slice without its announcement. A node is played by a broker that fetches
 * and settles with results.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  client: Client;
  /** Reads of stored results the client made (getResult and getResults ids). */
  looks: string[];
  /** Fetches up to `n` jobs and settles each with its id as value (or `value`). */
  finish: (n: number, value?: unknown) => Promise<Delivery[]>;
  /** The Redis scope, for the Redis broker. */
  scope?: Scope;
}

async function setup(kind: 'redis' | 'memory', wrap?: (b: Broker) => void): Promise<Setup> {
  let clientBroker: Broker;
  let worker: Broker;
  let scope: Scope | undefined;
  if (kind === 'redis') {
    scope = new Scope();
    const s = scope;
    cleanups.push(() => s.cleanup());
    clientBroker = await scope.broker();
    worker = await scope.broker();
  } else {
    const url = `memory://first-look-${randomUUID()}`;
    clientBroker = createBroker(url, { logger: log });
    worker = createBroker(url, { logger: log });
    await clientBroker.connect();
    await worker.connect();
    cleanups.push(() => worker.close());
    cleanups.push(() => clientBroker.close());
  }
  const looks: string[] = [];
  const getResult = clientBroker.getResult.bind(clientBroker);
  clientBroker.getResult = (id) => {
    looks.push(id);
    return getResult(id);
  };
  const getResults = clientBroker.getResults.bind(clientBroker);
  clientBroker.getResults = (ids, options) => {
    looks.push(...ids);
    return getResults(ids, options);
  };
  wrap?.(clientBroker);
  const client = new Client({ broker: clientBroker, logger: log });
  cleanups.push(() => client.close());
  await registerNode(worker, 'n', ['default']);
  const finish = async (n: number, value?: unknown): Promise<Delivery[]> => {
    const reply = await worker.fetch({ nodeId: 'n', plan: [{ queue: 'default', quota: n }], count: n, settle: [] });
    const result = (d: Delivery): ResultRecord => ({
      id: d.job.id,
      task: d.job.task,
      queue: d.queue,
      state: 'SUCCESS',
      value: value ?? d.job.id,
      retries: 0,
    });
    await worker.settle(reply.deliveries.map((d) => ({ kind: 'ack' as const, delivery: d, result: result(d) })));
    return reply.deliveries;
  };
  return { client, looks, finish, scope };
}

/** Starts a wait for the handle's result (20 s at most); a rejection left unawaited is not reported. */
function waitFor(handle: JobHandle): Promise<unknown> {
  const waiting = handle.result({ timeout: '20s' });
  waiting.catch(() => undefined);
  return waiting;
}

describe.each(['redis', 'memory'] as const)('Client on %s: the first wait of a job it enqueued', (kind) => {
  it('reads no stored result; a second wait reads it', async () => {
    const { client, looks, finish } = await setup(kind);
    const handle = await client.enqueue('add');
    const waiting = waitFor(handle);
    await finish(1);
    expect(await waiting).toBe(handle.id);
    expect(looks).toEqual([]);
    // The announcement went to the first wait: the second finds the stored result.
    expect(await handle.result({ timeout: '20s' })).toBe(handle.id);
    expect(looks).toEqual([handle.id]);
  });

  it('looks first when the job was enqueued more than a second before', async () => {
    const { client, looks, finish } = await setup(kind);
    vi.useFakeTimers({ toFake: ['Date'] });
    const handle = await client.enqueue('add');
    await finish(1);
    vi.setSystemTime(Date.now() + 1_500);
    expect(await waitFor(handle)).toBe(handle.id);
    // Looks go out together a turn later (BatchedReads): the announcement may hand the result over first.
    await expect.poll(() => looks).toContain(handle.id);
  });

  it('looks first when a parked result was pushed out since the job was enqueued', async () => {
    const { client, looks, finish } = await setup(kind);
    // More results announced while nobody waits for them than the client parks (1,000).
    const [target, ...others] = await client.enqueueMany(Array.from({ length: 1_002 }, () => ({ name: 'add' })));
    const keeper = await client.enqueue('add');
    // A wait on another job keeps the client reading its announcements.
    const keeping = waitFor(keeper);
    await finish(1_002);
    // The newest announced: once it is handed over, every one was read, the oldest two pushed out
    // (a read takes up to 1,000: parkedResults is 1,000 before the last two come).
    expect(await waitFor(others.at(-1)!)).toBe(others.at(-1)!.id);
    expect(looks).not.toContain(target!.id);
    expect(await waitFor(target!)).toBe(target!.id);
    expect(looks).toContain(target!.id);
    await finish(1);
    expect(await keeping).toBe(keeper.id);
  });
});

describe('Client on Redis: a wait that skipped its first look', () => {
  it('reads the stored result after a slice when the announcement never comes', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let blocked!: () => void;
    const reading = new Promise<void>((resolve) => (blocked = resolve));
    const { client, looks, finish, scope } = await setup('redis', (b) => {
      const realWait = b.waitForResults.bind(b);
      b.waitForResults = async (...args) => {
        blocked();
        await gate;
        return realWait(...args);
      };
    });
    const handle = await client.enqueue('add');
    const waiting = waitFor(handle);
    await reading;
    await finish(1, 'stored');
    // The announcement is lost before the client reads it (another program emptied the list).
    expect(await scope!.raw.del(new Keys(scope!.ns).reply(client.id))).toBe(1);
    release();
    expect(await waiting).toBe('stored');
    expect(looks).toEqual([handle.id]);
  });
});
