/**
 * A revoke of jobs waiting in their queue when Redis does not take all its
 * writes: the connection lost between calls, a reply lost (the call sent
 * again on a new connection), Redis at maxmemory refusing writes. Whatever
 * happens, no job is out of its queue without its REVOKED result (it would
 * be lost: no node runs it, its client waits for ever), and its client is
 * told with the result.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import { BrokerFullError } from '../../dist/errors.js';
import type { Broker, Delivery, ResultRecord } from '../../dist/broker/types.js';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitUntil } from '../helpers/wait.js';
import { job, log, Scope } from './redis-helpers.js';

const REVOKE = { terminate: false, grace: 5_000 };
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Enqueues `n` jobs on queue q whose client is `c1`; their ids. */
async function enqueue(b: Broker, n: number): Promise<string[]> {
  const jobs = Array.from({ length: n }, () => job('q', { replyTo: 'c1' }));
  await b.enqueue(jobs);
  return jobs.map((j) => j.id);
}

/** Each job either still waits in its queue or has its REVOKED result, announced to its client. */
async function noneLost(b: Broker, raw: Redis, ns: string, ids: readonly string[]): Promise<string[]> {
  const announced = await raw.lrange(`${ns}:reply:c1`, 0, -1);
  const revoked: string[] = [];
  for (const id of ids) {
    const [where, result] = [await b.locate(id), await b.getResult(id)];
    if (result?.state === 'REVOKED') {
      expect(where, id).toBeUndefined();
      expect(announced, id).toContain(id);
      revoked.push(id);
    } else
      expect({ id, where: where?.state, result: result?.state }).toEqual({ id, where: 'waiting', result: undefined });
  }
  return revoked;
}

describe('through a proxy', () => {
  async function setup(): Promise<{ scope: Scope; proxy: TcpProxy; b: RedisBroker; direct: RedisBroker }> {
    const scope = new Scope();
    cleanups.push(() => scope.cleanup());
    const { proxy, broker: b } = await scope.brokerThroughProxy();
    return { scope, proxy, b, direct: await scope.broker() };
  }

  it('the connection lost before the results are written: each job waits still, or is out with its result', async () => {
    const { scope, proxy, b, direct } = await setup();
    const ids = await enqueue(direct, 3);
    // The REVOKED records go in the first request that carries one; it never reaches Redis, nor
    // does any request after it (new connections are refused until the test lets them through).
    const cut = proxy.cutOnRequest('RevokedError', 'refuse');
    await expect(b.revoke(ids, REVOKE)).rejects.toThrow();
    await cut;
    proxy.setMode('forward');
    await noneLost(direct, scope.raw, scope.ns, ids);
    // Revoked again once Redis is reachable, every one is.
    const outcomes = await b.revoke(ids, REVOKE);
    expect(outcomes.map((o) => o.outcome)).toEqual(['revoked', 'revoked', 'revoked']);
    expect(await noneLost(direct, scope.raw, scope.ns, ids)).toEqual(ids);
    expect((await direct.counts(['q']))[0]).toMatchObject({ waiting: 0, reserved: 0, delayed: 0 });
  });

  it("a removal's reply lost with the connection: the call fails, and the job is out with its result", async () => {
    const { scope, proxy, b, direct } = await setup();
    const [id] = (await enqueue(direct, 1)) as [string];
    // The removal is the only request that names the job's place in the job index.
    const place = (await scope.raw.hget(scope.key('jobs'), id)) as string;
    const held = proxy.holdRepliesAfter(place);
    const revoking = b.revoke([id], REVOKE);
    revoking.catch(() => undefined);
    await held;
    // Redis ran it (the job left the index); its reply is cut off with the connection.
    await waitUntil(async () => (await scope.raw.hexists(scope.key('jobs'), id)) === 0, 'the removal ran');
    proxy.dropAll();
    proxy.releaseReplies();
    await expect(revoking).rejects.toThrow(/may or may not have been applied/);
    expect(await noneLost(direct, scope.raw, scope.ns, [id])).toEqual([id]);
    // Revoked again, it says so (not an unknown id).
    expect(await b.revoke([id], REVOKE)).toEqual([{ id, outcome: 'revoked', state: 'REVOKED' }]);
  });

  it('a job that finishes between its look and its removal is finished, not unknown', async () => {
    const { proxy, b, direct } = await setup();
    const [id] = (await enqueue(direct, 1)) as [string];
    await direct.register({
      id: 'n',
      name: 'n@test',
      host: 'test',
      pid: process.pid,
      queues: ['q'],
      concurrency: '1',
      startedAt: Date.now(),
    });
    // The look (an XPENDING of the job's entry) is answered once the job has run elsewhere.
    const held = proxy.holdRepliesAfter('XPENDING');
    const revoking = b.revoke([id], REVOKE);
    await held;
    const { deliveries } = await direct.fetch({ nodeId: 'n', plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
    const d = deliveries[0] as Delivery;
    expect(d.job.id).toBe(id);
    const result: ResultRecord = { id, task: d.job.task, queue: 'q', state: 'SUCCESS', value: 1, retries: 0 };
    await direct.settle([{ kind: 'ack', delivery: d, result }]);
    proxy.releaseReplies();
    expect(await revoking).toEqual([{ id, outcome: 'finished', state: 'SUCCESS' }]);
    expect(await direct.getResult(id)).toMatchObject({ state: 'SUCCESS', value: 1 });
  });
});

describe('at maxmemory', () => {
  const own = ownRedisPerTest({ beforeCleanup: (raw) => raw.config('SET', 'maxmemory', '0') });

  it('each job waits still, or is out with its result', async () => {
    const b = new RedisBroker(own.server.url, { namespace: 'oom', logger: log });
    cleanups.push(() => b.close());
    await b.connect();
    const ids = await enqueue(b, 3);
    await own.raw.config('SET', 'maxmemory', '1');
    // The revoked set cannot grow: the call fails with a named error that says what it did, Redis's reply its cause.
    const err: unknown = await b.revoke(ids.slice(0, 2), REVOKE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrokerFullError);
    expect((err as Error).message).toMatch(
      /refused to record the revoke: jobs that waited in their queues are revoked/,
    );
    expect(((err as Error).cause as Error).message).toMatch(/^OOM/);
    await own.raw.config('SET', 'maxmemory', '0');
    const revoked = await noneLost(b, own.raw, 'oom', ids);
    expect(revoked).not.toContain(ids[2]);
  });
});
