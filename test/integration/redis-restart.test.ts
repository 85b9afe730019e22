import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BrokerUnavailableError } from '../../dist/errors.js';
import { GROUP } from '../../dist/broker/redis/keys.js';
import { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import { freePort, startRedisServer, type RedisServer } from '../../scripts/redis.mjs';
import { Redis } from 'ioredis';
import { WAIT } from '../helpers/wait.js';
import { fetchFrom, ids, job, log, registerNode, result, sleep } from './redis-helpers.js';

/** Retries an operation while Redis is coming back (the broker's own callers retry the same way). */
const eventually = <T>(op: () => Promise<T>): Promise<T> => vi.waitFor(op, { ...WAIT, interval: 100 });

describe('RedisBroker: Redis unreachable at connect', () => {
  it('rejects with BrokerUnavailableError, and connects once Redis is there', async () => {
    const port = await freePort();
    const broker = new RedisBroker(`redis://127.0.0.1:${port}`, { logger: log });
    const err = await broker.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect(err).toMatchObject({ code: 'PREFORK_BROKER_UNAVAILABLE' });
    expect((err as Error).message).toContain(`127.0.0.1:${port}`);
    const server = await startRedisServer({ port });
    try {
      await broker.connect();
      expect(await broker.knownQueues()).toEqual([]);
    } finally {
      await broker.close();
      await server.stop();
    }
  });
});

describe('RedisBroker: Redis restarted mid-run', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('reconnects, re-arms a blocked waitForWork, and enqueue/fetch work after the restart', async () => {
    const worker = new RedisBroker(server.url, { logger: log, namespace: 'restart' });
    const producer = new RedisBroker(server.url, { logger: log, namespace: 'restart' });
    try {
      await worker.connect();
      await producer.connect();
      await registerNode(worker, 'W', ['default']);
      const before = job('default');
      await producer.enqueue([before]);
      expect(ids((await fetchFrom(worker, 'W', ['default'], 5)).deliveries)).toEqual([before.id]);

      const waiting = worker.waitForWork('W', ['default'], 9_000, new AbortController().signal, 1);
      await sleep(200);
      await server.restart();

      const after = job('default');
      await eventually(() => producer.enqueue([after]));
      const woke = await waiting;
      // The re-armed read found the job, but the restart took the node's lease
      // with it (no persistence): a node without a lease is handed nothing; the
      // job waits, served first, for whoever fetches next.
      expect(woke.deliveries).toEqual([]);
      expect(await producer.counts(['default'])).toMatchObject([{ waiting: 1, reserved: 0 }]);
      // Handed back to the redelivery stream by the woken read (a wait that had merely timed out would have left it in the queue's stream).
      const raw = new Redis(server.url);
      try {
        expect(await raw.xlen('{restart}:rd:default')).toBe(1);
      } finally {
        raw.disconnect();
      }

      // Everything was lost with the restart: the node registers again and carries on.
      await eventually(() => registerNode(worker, 'W', ['default']));
      const delayed = job('default', { delay: 50 });
      const now = job('default');
      await producer.enqueue([delayed, now]);
      expect(ids((await fetchFrom(worker, 'W', ['default'], 5)).deliveries)).toEqual([after.id, now.id]);
      await sleep(80);
      const reply = await fetchFrom(worker, 'W', ['default'], 5);
      expect(ids(reply.deliveries)).toEqual([delayed.id]);
      await worker.settle(reply.deliveries.map((d) => ({ kind: 'ack' as const, delivery: d })));
    } finally {
      await worker.close();
      await producer.close();
    }
  });

  it('takes back entries reserved by a reply lost with the connection', async () => {
    const broker = new RedisBroker(server.url, { logger: log, namespace: 'orphans' });
    const raw = new Redis(server.url);
    try {
      await broker.connect();
      await registerNode(broker, 'N', ['default']);
      const [seen, lost] = [job('default'), job('default')];
      await broker.enqueue([seen, lost]);
      const first = await fetchFrom(broker, 'N', ['default'], 1);
      expect(ids(first.deliveries)).toEqual([seen.id]);
      // As if a fetch ran on Redis and its reply died with the connection: reserved for N, never seen by N.
      await raw.xreadgroup('GROUP', GROUP, 'N', 'COUNT', 1, 'STREAMS', '{orphans}:q:default', '>');
      await raw.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      // Any round trip after the kill goes over a new connection; the one after it looks for orphans.
      await eventually(() => fetchFrom(broker, 'N', ['default'], 0));
      const next = await fetchFrom(broker, 'N', ['default'], 5);
      expect(ids(next.deliveries)).toEqual([lost.id]);
      await broker.settle(
        [...first.deliveries, ...next.deliveries].map((d) => ({ kind: 'ack' as const, delivery: d })),
      );
      expect(await raw.xlen('{orphans}:q:default')).toBe(0);
    } finally {
      await broker.close();
      raw.disconnect();
    }
  });
});

describe('RedisBroker: Redis lost its script cache (SCRIPT FLUSH, a failover)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('runs its scripts again, alone and in the pipelines that settle and store results', async () => {
    const broker = new RedisBroker(server.url, { logger: log, namespace: 'flushed' });
    const admin = new Redis(server.url);
    try {
      await broker.connect();
      await registerNode(broker, 'W', ['default']);
      await broker.enqueue([job('default', { replyTo: 'c' }), job('default', { replyTo: 'c' })]);
      await admin.script('FLUSH');
      // The fetch script alone, then its settle pipeline (fetchJobs + storeResults) on a cache flushed again.
      const got = await fetchFrom(broker, 'W', ['default'], 2);
      expect(got.deliveries).toHaveLength(2);
      await admin.script('FLUSH');
      await broker.settle(
        got.deliveries.map((d) => ({ kind: 'ack', delivery: d, result: result(d, 'SUCCESS', d.job.id) })),
      );
      const read = await broker.waitForResults('c', 2_000);
      expect(read.records.map((r) => r.value)).toEqual(got.deliveries.map((d) => d.job.id));
      expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: 0, reserved: 0 });
    } finally {
      admin.disconnect();
      await broker.close();
    }
  });
});
