/**
 * What a heartbeat costs Redis, counted in INFO commandstats (Lua's inner
 * commands included) on a redis-server of this file's own: the shared one
 * counts every test's commands. An idle node pays its heartbeats, so a beat
 * reads its own lease from the range of earliest deadlines it reads anyway
 * (no ZSCORE), and looks at the delayed and recovering sets on one beat in four.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlRequest } from '../../dist/broker/types.js';
import { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import { MIN_LEASE_MS } from '../../dist/broker/broker-options.js';
import { startRedisServer, type RedisServer } from '../../scripts/redis.mjs';
import { fetchFrom, job, log, registerNode } from './redis-helpers.js';

let server: RedisServer;
let raw: Redis;
const brokers: RedisBroker[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis(server.url);
});
afterAll(async () => {
  await Promise.all(brokers.map((b) => b.close()));
  raw.disconnect();
  await server.stop();
});

async function broker(namespace: string, leaseMs?: number): Promise<RedisBroker> {
  const b = new RedisBroker(server.url, { namespace, logger: log, ...(leaseMs === undefined ? {} : { leaseMs }) });
  brokers.push(b);
  await b.connect();
  return b;
}

async function calls(): Promise<Map<string, number>> {
  const text = await raw.info('commandstats');
  return new Map([...text.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
}

/** The commands Redis ran while `op` ran, by name; INFO left out (the counting's own, and a connection's ready check). */
async function counted(op: () => Promise<void>): Promise<Record<string, number>> {
  const before = await calls();
  await op();
  const after = await calls();
  const out: Record<string, number> = {};
  for (const [name, n] of after) {
    const d = n - (before.get(name) ?? 0);
    if (d > 0 && name !== 'info') out[name] = d;
  }
  return out;
}

describe('RedisBroker heartbeat: commands per beat', () => {
  it('eight beats on two queues: TIME, one ZRANGE and a ZADD each; the delayed and recovering sets on two of them', async () => {
    const b = await broker('cost1');
    await registerNode(b, 'me', ['a', 'b']);
    await registerNode(b, 'other', ['a']);
    await b.heartbeat('me', ['a', 'b']); // loads the script into Redis's cache
    const beats = await counted(async () => {
      for (let i = 0; i < 8; i++) expect((await b.heartbeat('me', ['a', 'b'])).fenced).toBe(false);
    });
    // Per beat 4 commands; per beat that looks further, one ZRANGE for the recovering set and one per delayed set.
    expect(beats).toEqual({ evalsha: 8, time: 8, zrange: 8 + 2 * (1 + 2), zadd: 8 });
  });

  it('a node whose lease is not among the earliest reads it on its own: renewed, its control requests handed over', async () => {
    const b = await broker('cost2');
    for (let i = 0; i < 8; i++) await registerNode(b, `early${i}`, ['q']);
    await registerNode(b, 'late', ['q']);
    const ping: ControlRequest = { id: 'r1', command: 'ping', args: [] };
    expect(await b.sendControl(['late'], ping, 10_000)).toEqual(['late']);
    let beat: Awaited<ReturnType<RedisBroker['heartbeat']>> | undefined;
    const used = await counted(async () => {
      beat = await b.heartbeat('late', ['q']);
    });
    expect(beat).toMatchObject({ fenced: false, control: [ping] });
    expect(used.zscore).toBe(1);
    const [, deadline] = await raw.zrange('{cost2}:nodes', -1, -1, 'WITHSCORES');
    expect(Number(deadline)).toBe(Math.floor(Number(deadline))); // renewed: the control flag cleared
    await b.unregister('late');
    expect((await b.heartbeat('late', ['q'])).fenced).toBe(true);
  });

  it('a node that stands for leader pays one HMGET per beat, and one HSET more while it leads; the others nothing', async () => {
    const b = await broker('cost3');
    await registerNode(b, 'leader', ['a']);
    await registerNode(b, 'follower', ['a']);
    await registerNode(b, 'plain', ['a']);
    // The first beat of a broker looks further (so does one in four): five beats before counting, so none of the three counted does.
    for (const id of ['leader', 'follower', 'plain', 'plain', 'plain']) await b.heartbeat(id, ['a'], id !== 'plain');
    const beat = (id: string, lead: boolean) => counted(async () => void (await b.heartbeat(id, ['a'], lead)));
    expect(await beat('leader', true)).toEqual({ evalsha: 1, time: 1, zrange: 1, zadd: 1, hmget: 1, hset: 1 });
    expect(await beat('follower', true)).toEqual({ evalsha: 1, time: 1, zrange: 1, zadd: 1, hmget: 1 });
    expect(await beat('plain', false)).toEqual({ evalsha: 1, time: 1, zrange: 1, zadd: 1 });
  });

  it('one beat in 32 sweeps for orphans: an XINFO per stream and one ZRANGE of the nodes, however many live consumers', async () => {
    const long = await broker('cost4', 60_000);
    await long.enqueue(Array.from({ length: 10 }, () => job('a')));
    for (let i = 0; i < 10; i++) {
      await registerNode(long, `n${i}`, ['a']);
      expect((await fetchFrom(long, `n${i}`, ['a'], 1)).deliveries).toHaveLength(1);
    }
    // Every consumer idle for longer than two of the beating node's leases.
    await new Promise((resolve) => setTimeout(resolve, 2 * MIN_LEASE_MS + 250));
    const short = await broker('cost4', MIN_LEASE_MS);
    await registerNode(short, 'me', ['a']);
    for (let i = 0; i < 31; i++) expect((await short.heartbeat('me', ['a'])).fenced).toBe(false);
    const sweep = await counted(async () => void (await short.heartbeat('me', ['a'])));
    // The beat's 4, the recovering set (a sweep reports what it found), the nodes once, and both streams' consumers.
    expect(sweep).toEqual({ evalsha: 1, time: 1, zrange: 3, zadd: 1, 'xinfo|consumers': 2 });
  });
});
