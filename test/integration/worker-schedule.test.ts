/**
 * A Worker's schedule over both brokers, with real worker children: a
 * tick's job is a job like any other — `handle.state()` finds it waiting in
 * its queue and then done, it can be revoked, and its node reports its
 * events — and a leader that stops warm hands the lease over at once.
 */
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { defineSchedule, type Client, type NodeEvent } from 'prefork';
import { createBroker } from 'prefork/broker';
import type { Broker } from '../../dist/broker/types.js';
import { brokerFor, captureLog, cleanup, makeClient, makeWorker, silent, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

const opened: Broker[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((b) => b.close()));
});

async function openBroker(url: string, namespace: string): Promise<Broker> {
  const b = createBroker(url, { namespace, logger: silent });
  opened.push(b);
  await b.connect();
  return b;
}

/** The id of the first job the entry enqueued (its state in the broker names the last one). */
function firstTickJob(b: Broker, entry: string): Promise<string> {
  return vi.waitFor(
    async () => {
      const state = (await b.listSchedule()).find((s) => s.name === entry);
      if (state?.lastJobId === undefined) throw new Error(`entry ${entry} has not fired yet`);
      return state.lastJobId;
    },
    { timeout: 30_000, interval: 100 },
  );
}

/** Events of the stream (from its start) until one says `jobId` succeeded. */
async function eventsUntilSucceeded(client: Client, jobId: string): Promise<NodeEvent[]> {
  const seen: NodeEvent[] = [];
  const stop = new AbortController();
  for await (const e of client.events({ recent: 100_000, signal: stop.signal })) {
    seen.push(e);
    if (e.jobId === jobId && e.type === 'job-succeeded') stop.abort();
  }
  return seen;
}

describe.each(['memory', 'redis'] as const)('a schedule on a worker over %s', (kind) => {
  const setup = () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    return { broker, namespace, client: makeClient(broker, namespace) };
  };

  it("a tick's job waits in its queue (PENDING), and can be revoked like any job", async () => {
    const { broker, namespace, client } = setup();
    const schedule = defineSchedule({ beat: { task: 'add', args: [1, 2], every: '1s', options: { queue: 'nobody' } } });
    await makeWorker({ broker, namespace, schedule }).start();
    const b = await openBroker(broker, namespace);
    const id = await firstTickJob(b, 'beat');
    const handle = client.handle(id);
    expect(await handle.state()).toMatchObject({ id, task: 'add', queue: 'nobody', state: 'PENDING', retries: 0 });
    expect(await handle.revoke()).toMatchObject({ id, outcome: 'revoked', removed: true });
    expect(await handle.state()).toMatchObject({ id, state: 'REVOKED' });
    expect(await b.locate(id)).toBeUndefined();
  });

  it('warns at start of each entry whose task it does not define on a queue it consumes, and of no other', async () => {
    const { broker, namespace } = setup();
    const schedule = defineSchedule({
      known: { task: 'add', every: '1h' },
      unknown: { task: 'noSuchTask', every: '1h' },
      elsewhere: { task: 'noSuchTask', every: '1h', options: { queue: 'nobody' } },
    });
    const { log, lines } = captureLog();
    await makeWorker({ broker, namespace, schedule, logger: log }).start();
    const warned = lines.filter((l) => l.level === 40 && l.entry !== undefined);
    expect(warned.map((l) => [l.entry, l.task, l.queue])).toEqual([['unknown', 'noSuchTask', 'default']]);
    expect(warned[0]?.msg).toMatch(/^schedule entry unknown: task noSuchTask is not defined by this node/);
  });

  it("a tick's job that ran: SUCCESS with its value, and its node's events for it as for any job", async () => {
    const { broker, namespace, client } = setup();
    const schedule = defineSchedule({ beat: { task: 'add', args: [2, 3], every: '1s' } });
    await makeWorker({ broker, namespace, name: 'node-s', schedule }).start();
    const b = await openBroker(broker, namespace);
    const id = await firstTickJob(b, 'beat');
    expect(await client.waitForResult(id)).toMatchObject({ id, state: 'SUCCESS', value: 5 });
    expect(await client.handle(id).state()).toMatchObject({ id, state: 'SUCCESS', value: 5 });
    const mine = (await eventsUntilSucceeded(client, id)).filter((e) => e.jobId === id);
    expect(mine.map((e) => e.type)).toEqual(['job-received', 'job-started', 'job-succeeded']);
    expect(mine[0]).toMatchObject({ node: 'node-s', task: 'add', queue: 'default' });
  });

  it('a leader stopped warm hands the lease over: another node takes it at once, with the next token', async () => {
    const { broker, namespace } = setup();
    const schedule = defineSchedule({ beat: { task: 'add', args: [1, 1], every: '1h' } });
    // A lease far longer than the test (beats every 4 minutes): only the hand-over can explain the takeover.
    const lease = '10m';
    const b = await openBroker(broker, namespace);
    const first = makeWorker({ broker, namespace, lease, name: 'node-a', schedule });
    await first.start();
    await expect.poll(() => b.leader(), { timeout: 30_000 }).toMatchObject({ nodeId: first.nodeId });
    const { token } = (await b.leader())!;
    const second = makeWorker({ broker, namespace, lease, name: 'node-b', schedule });
    await second.start();
    await first.stop();
    await expect.poll(() => b.leader(), { timeout: 30_000 }).toEqual({ nodeId: second.nodeId, token: token + 1 });
  }, 60_000);
});
