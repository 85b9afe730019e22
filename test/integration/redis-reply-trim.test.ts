/**
 * What announcing results costs Redis, counted in INFO commandstats on a
 * redis-server of this file's own (the shared one counts every test's
 * commands): a node trims a client's reply list on its first announcement
 * to it and then once per 256 ids, not on every settle batch (a node of one
 * child settles a few jobs per batch); the list stays bounded all the same.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import type { Settlement } from '../../dist/broker/types.js';
import { startRedisServer, type RedisServer } from '../../scripts/redis.mjs';
import { job, log, result } from './redis-helpers.js';

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

async function ltrims(): Promise<number> {
  const text = await raw.info('commandstats');
  return Number(/cmdstat_ltrim:calls=(\d+)/.exec(text)?.[1] ?? 0);
}

/** Settlements of receipts nobody holds: they move no job but write and announce their results. */
function announced(n: number, from: number): Settlement[] {
  return Array.from({ length: n }, (_, i) => {
    const d = { receipt: 'q:0-1', queue: 'default', job: job('default', { id: `r${from + i}`, replyTo: 'c1' }) };
    return { kind: 'ack' as const, delivery: d, result: result(d, 'SUCCESS', i) };
  });
}

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
