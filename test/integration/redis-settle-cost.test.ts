/**
 * What a settle batch costs Redis, counted in INFO commandstats on a
 * redis-server of this file's own (the shared one counts every test's
 * commands). Plain acks of entries still reserved drop their jobs from the
 * index with one HDEL, no HMGET; a batch with a late ack among them (an
 * entry recovered meanwhile) checks each and leaves the recovered job
 * indexed. A node trims a client's reply list on its first announcement to
 * it and then once per 256 ids, not on every settle batch (a node of one
 * child settles a few jobs per batch); the list stays bounded all the same.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import type { Settlement } from '../../dist/broker/types.js';
import { startRedisServer, type RedisServer } from '../../scripts/redis.mjs';
import { fetchFrom, job, log, registerNode, result } from './redis-helpers.js';

let server: RedisServer;
let raw: Redis;
let broker: RedisBroker;

beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis(server.url);
  broker = new RedisBroker(server.url, { namespace: 'trim', logger: log });
  await broker.connect();
});
afterAll(async () => {
  await broker.close();
  raw.disconnect();
  await server.stop();
});

async function calls(name: string): Promise<number> {
  const text = await raw.info('commandstats');
  return Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(text)?.[1] ?? 0);
}
const ltrims = (): Promise<number> => calls('ltrim');

/** Settlements of receipts nobody holds: they move no job but write and announce their results. */
function announced(n: number, from: number): Settlement[] {
  return Array.from({ length: n }, (_, i) => {
    const d = { receipt: 'q:0-1', queue: 'default', job: job('default', { id: `r${from + i}`, replyTo: 'c1' }) };
    return { kind: 'ack' as const, delivery: d, result: result(d, 'SUCCESS', i) };
  });
}

describe('RedisBroker: plain acks', () => {
  it('of entries still reserved: one HDEL drops their jobs from the index, no HMGET', async () => {
    await registerNode(broker, 'n1', ['acks']);
    await broker.enqueue(Array.from({ length: 5 }, () => job('acks')));
    const got = await fetchFrom(broker, 'n1', ['acks'], 5);
    expect(got.deliveries).toHaveLength(5);
    const [hmget, hdel] = [await calls('hmget'), await calls('hdel')];
    await broker.settle(got.deliveries.map((delivery) => ({ kind: 'ack' as const, delivery })));
    expect([(await calls('hmget')) - hmget, (await calls('hdel')) - hdel]).toEqual([0, 1]);
    expect(await raw.hlen('{trim}:jobs')).toBe(0);
  });

  it('with a late ack among them: each checked, and a job recovered meanwhile stays indexed', async () => {
    await registerNode(broker, 'n2', ['late']);
    await broker.enqueue([job('late', { id: 'kept' }), job('late', { id: 'acked' })]);
    const got = await fetchFrom(broker, 'n2', ['late'], 2);
    const [kept, acked] = got.deliveries;
    // 'kept' was given back meanwhile (a new entry in :rd, indexed there): its old entry is no longer reserved.
    await broker.settle([{ kind: 'giveBack', delivery: kept! }]);
    const place = await raw.hget('{trim}:jobs', 'kept');
    const hmget = await calls('hmget');
    await broker.settle([
      { kind: 'ack', delivery: kept! },
      { kind: 'ack', delivery: acked! },
    ]);
    expect((await calls('hmget')) - hmget).toBe(1);
    expect(await raw.hget('{trim}:jobs', 'kept')).toBe(place);
    expect(await raw.hget('{trim}:jobs', 'acked')).toBeNull();
  });
});

describe('RedisBroker: reply lists', () => {
  it('are trimmed on the first announcement, then once per 256 ids, and stay bounded', async () => {
    const key = 'trim:reply:c1';
    const before = await ltrims();
    // 30 batches of 10: trimmed by the first, then once the 256 ids since are reached (batch 27).
    for (let b = 0; b < 30; b++) await broker.settle(announced(10, 10 * b));
    expect((await ltrims()) - before).toBe(2);
    expect(await raw.llen(key)).toBe(300);
    expect(await raw.pttl(key)).toBeGreaterThan(0);
    // A batch that overflows the list is past 256 ids: trimmed to the newest 10,000.
    await broker.settle(announced(10_000, 300));
    expect((await ltrims()) - before).toBe(3);
    expect(await raw.llen(key)).toBe(10_000);
    expect(await raw.lindex(key, -1)).toBe('r300');
  });
});
