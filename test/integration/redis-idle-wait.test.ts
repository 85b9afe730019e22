/**
 * An idle node's blocking wait, on a redis-server of this file's own (INFO
 * commandstats counts every client's commands): a long wait is blocks
 * re-armed with no fetch between them, and it ends early, after the block
 * under way, once a lost connection may have left entries reserved unseen,
 * so the caller's next fetch takes them back. Blocks are shortened to 200 ms
 * here (the real ones last 2 minutes).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, group, task } from 'prefork';
import { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import { startRedisServer, type RedisServer } from '../../scripts/redis.mjs';
import { ids, job, log, registerNode } from './redis-helpers.js';

let server: RedisServer;
let raw: Redis;
let broker: RedisBroker;
const NODE = 'idle-node';

beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis(server.url);
  broker = new RedisBroker(server.url, { namespace: 'idle', logger: log });
  await broker.connect();
  (broker as unknown as { workWaits: { maxBlockMs: number } }).workWaits.maxBlockMs = 200;
  await registerNode(broker, NODE, ['q']);
});
afterAll(async () => {
  await broker.close();
  raw.disconnect();
  await server.stop();
});

async function calls(): Promise<Map<string, number>> {
  const text = await raw.info('commandstats');
  return new Map([...text.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
}

describe('RedisBroker: an idle wait', () => {
  it('re-arms its block with no fetch between, and still takes a job that arrives in a later block', async () => {
    // Creates the consumer groups before counting.
    await broker.waitForWork(NODE, ['q'], 10, new AbortController().signal, 1);
    const before = await calls();
    const waiting = broker.waitForWork(NODE, ['q'], 60_000, new AbortController().signal, 1);
    // Three blocks ran their course (each one XREADGROUP): then a job comes.
    await expect
      .poll(async () => ((await calls()).get('xreadgroup') ?? 0) - (before.get('xreadgroup') ?? 0))
      .toBeGreaterThanOrEqual(3);
    // No fetch script ran (nor the TIME it reads): only the blocks.
    const blocked = await calls();
    for (const name of ['evalsha', 'eval', 'time']) expect((blocked.get(name) ?? 0) - (before.get(name) ?? 0)).toBe(0);
    const j = job('q');
    await broker.enqueue([j]);
    expect(ids((await waiting).deliveries)).toEqual([j.id]);
  });

  it('a block that reads a timer marker together with a job says when to fetch: the delayed job is not left for a heartbeat', async () => {
    const queue = 'marked';
    await broker.waitForWork(NODE, [queue], 10, new AbortController().signal, 1); // creates the groups
    // Room for two: the read takes the marker and the job together.
    const waiting = broker.waitForWork(NODE, [queue], 60_000, new AbortController().signal, 2);
    await expect.poll(async () => /flags=b .*cmd=xreadgroup/.test((await raw.client('LIST')) as string)).toBe(true);
    // One script adds both: a delayed member (first in its delayed set: a timer marker) and a ready one.
    const client = new Client({ broker: server.url, namespace: 'idle', logger: log });
    try {
      await client.enqueue(group([task('add', [1], { queue, delay: 60_000 }), task('add', [2], { queue })]));
    } finally {
      await client.close();
    }
    const reply = await waiting;
    expect(reply.deliveries).toHaveLength(1);
    // The marker was acked with the job (no other node sees it): the caller must ask the broker for the due time.
    expect(reply.nextDueAt).toBeDefined();
  });

  it('ends after the block under way when the connection was lost meanwhile (the next fetch takes back orphans)', async () => {
    const waiting = broker.waitForWork(NODE, ['q'], 10 * 60_000, new AbortController().signal, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await raw.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes'); // every client but this one: the blocked one among them
    // Not the 10 minutes: the wait ends once its re-armed block runs out.
    expect((await waiting).deliveries).toEqual([]);
  });
});
