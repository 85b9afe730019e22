/**
 * Redis at maxmemory. Under noeviction (the policy prefork needs) Redis
 * refuses every write that would grow it: a node's lease must not depend on
 * that (heartbeats and registration still go through), a refused write is
 * logged once with what to do, and the outcomes a node could not write land
 * once Redis has room. Any other policy deletes data silently when full: it
 * is warned about at connect. maxmemory is server-wide, so each test has a
 * redis-server of its own.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BrokerFullError, Client } from 'prefork';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { captureLog, makeClient, makeWorker, newLedger, readLedger, uniqueName } from '../helpers/worker.js';
import { waitUntil } from '../helpers/wait.js';

// Room again before the workers stop: they write what they held.
const own = ownRedisPerTest({ beforeCleanup: (raw) => raw.config('SET', 'maxmemory', '0') });

async function redisNow(): Promise<number> {
  const [seconds, micros] = await own.raw.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

const said = (lines: Record<string, unknown>[], pattern: RegExp): Record<string, unknown>[] =>
  lines.filter((l) => pattern.test(String(l.msg)));

describe('Redis under memory pressure', () => {
  it('at maxmemory the node keeps its lease, says once what is wrong, and writes the held outcome once Redis has room', async () => {
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const { log, lines } = captureLog();
    const leaseMs = 1_500;
    const worker = makeWorker({ broker: own.server.url, namespace, ledger, concurrency: 1, leaseMs, logger: log });
    await worker.start();
    const nodeId = worker.nodeId;
    const job = await makeClient(own.server.url, namespace).enqueue('record', [500]);
    await waitUntil(() => readLedger(ledger).length === 1, 'the job runs');

    // Full from now on: every write that would grow Redis is refused (noeviction is the default policy).
    await own.raw.config('SET', 'maxmemory', '1');
    const deadline = Number(await own.raw.zscore(`{${namespace}}:nodes`, nodeId));
    await waitUntil(async () => (await redisNow()) > deadline + leaseMs, 'a whole lease passed since Redis filled up');
    // Heartbeats went through: the lease runs on, the node was never fenced.
    expect(Number(await own.raw.zscore(`{${namespace}}:nodes`, nodeId))).toBeGreaterThan(await redisNow());
    expect(worker.nodeId).toBe(nodeId);
    expect(said(lines, /fenced|registration vanished/)).toEqual([]);

    // The job's outcome was refused, and retried: one warning, naming maxmemory and noeviction.
    await waitUntil(() => said(lines, /could not settle jobs/).length >= 3, 'the outcome was retried a few times');
    const warnings = said(lines, /out of memory/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.level).toBe(40);
    expect(warnings[0]?.msg).toMatch(/maxmemory.*noeviction.*Nothing is lost/);
    expect(await job.state()).toBeUndefined();

    // A producer is refused too: the enqueue rejects, and its log says once what to do.
    const producerLog = captureLog();
    const producer = new Client({ broker: own.server.url, namespace, logger: producerLog.log });
    try {
      // A named error saying what to do, Redis's bare OOM reply its cause.
      for (const n of [1, 2]) {
        const err = await producer.enqueue('add', [n, n]).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(BrokerFullError);
        expect(err).toMatchObject({ code: 'PREFORK_BROKER_FULL', url: own.server.url });
        expect((err as Error).message).toMatch(/is out of memory .*nothing was enqueued; retry once it has room/);
        expect(((err as Error).cause as Error).message).toMatch(/^OOM/);
      }
    } finally {
      await producer.close();
    }
    const refusals = said(producerLog.lines, /out of memory/);
    expect(refusals.map((l) => l.level)).toEqual([40]);
    expect(refusals[0]?.msg).toMatch(/refused to enqueue jobs.*retry it/);

    // Room again: the outcome the node held lands.
    await own.raw.config('SET', 'maxmemory', '0');
    expect(await job.result({ timeout: 30_000 })).toBe(job.id);
    // Logged once the write's reply is in, which may come after the client heard of the result.
    await waitUntil(() => said(lines, /Redis has room again/).length > 0, 'the node says Redis has room');
    expect(said(lines, /Redis has room again/)).toHaveLength(1);
    expect(readLedger(ledger)).toHaveLength(1);
  });

  it('a job acked whose outcome its node holds (Redis full) is in no queue and has no result: its wait waits', async () => {
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    await makeWorker({ broker: own.server.url, namespace, ledger, concurrency: 1 }).start();
    const client = makeClient(own.server.url, namespace);
    const job = await client.enqueue('record', [500]);
    await waitUntil(() => readLedger(ledger).length === 1, 'the job runs');
    await own.raw.config('SET', 'maxmemory', '1');
    // Acked, its result refused: nowhere to be found, as a purged job is.
    await expect.poll(() => job.state(), { timeout: 10_000 }).toBeUndefined();
    let settled = false;
    const waited = job.result().finally(() => (settled = true));
    waited.catch(() => undefined); // awaited below
    // Looked for twice (a slice apart) while Redis stays full: it is not given up for gone.
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    expect(settled).toBe(false);
    await own.raw.config('SET', 'maxmemory', '0');
    expect(await waited).toBe(job.id);
  });

  it('a final result refused at maxmemory after its ack went through lands once there is room, over the STARTED record', async () => {
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const { log, lines } = captureLog();
    await makeWorker({
      broker: own.server.url,
      namespace,
      ledger,
      concurrency: 1,
      trackStarted: true,
      logger: log,
    }).start();
    const job = await makeClient(own.server.url, namespace).enqueue('waitForFile', ['done']);
    await waitUntil(
      async () => (await job.state())?.state === 'STARTED',
      'the job started, and its STARTED record is stored',
    );
    await own.raw.config('SET', 'maxmemory', '1');
    // It ends now: its ack frees memory and goes through, the SUCCESS record after it is refused.
    writeFileSync(`${ledger}.done`, '');
    await waitUntil(() => said(lines, /could not settle jobs/).length > 0, 'the outcome was refused');
    await own.raw.config('SET', 'maxmemory', '0');
    expect(await job.result({ timeout: 15_000 })).toBe('done');
    expect((await job.state())?.state).toBe('SUCCESS');
  });

  it('a node started while Redis is full registers and keeps its lease; once there is room it runs what waited', async () => {
    const namespace = uniqueName('ns');
    const job = await makeClient(own.server.url, namespace).enqueue('add', [2, 3]);
    await own.raw.config('SET', 'maxmemory', '1');
    const leaseMs = 1_500;
    const { log, lines } = captureLog();
    const worker = makeWorker({ broker: own.server.url, namespace, leaseMs, logger: log });
    await worker.start();
    const nodeId = worker.nodeId;
    const deadline = Number(await own.raw.zscore(`{${namespace}}:nodes`, nodeId));
    expect(deadline).toBeGreaterThan(0);
    await waitUntil(async () => (await redisNow()) > deadline + leaseMs, 'a whole lease passed since it registered');
    expect(Number(await own.raw.zscore(`{${namespace}}:nodes`, nodeId))).toBeGreaterThan(await redisNow());
    expect(worker.nodeId).toBe(nodeId);
    expect(await job.state()).toBeUndefined();
    // It waits for work as on a Redis with room: blocked on its queues' groups (created at maxmemory too),
    // not polling with a warning twice a second.
    await waitUntil(
      async () => /flags=b .*cmd=xreadgroup/.test((await own.raw.client('LIST')) as string),
      'the node blocks waiting for work',
    );
    expect(said(lines, /waiting for work/)).toEqual([]);

    await own.raw.config('SET', 'maxmemory', '0');
    expect(await job.result({ timeout: 30_000 })).toBe(5);
  });

  it('at maxmemory a delayed job that is due is promoted, and the jobs queued behind it run', async () => {
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const client = makeClient(own.server.url, namespace);
    // ignoreResult: their acks only delete, so they can settle while Redis is full.
    const delayed = await client.enqueue('record', [], { delay: 50, ignoreResult: true });
    const queued = await Promise.all([1, 2, 3].map(() => client.enqueue('record', [], { ignoreResult: true })));
    const dueAt = Number(/^d:(\d+):/.exec((await own.raw.hget(`{${namespace}}:jobs`, delayed.id)) ?? '')?.[1]);
    await waitUntil(async () => (await redisNow()) > dueAt, 'the delayed job is due');
    await own.raw.config('SET', 'maxmemory', '1');

    // A promotion moves a job and grows nothing: refused, it failed every fetch, and nothing ran.
    await makeWorker({ broker: own.server.url, namespace, ledger }).start();
    const ids = [delayed.id, ...queued.map((h) => h.id)];
    await waitUntil(() => readLedger(ledger).length >= ids.length, 'every job ran while Redis was full');
    expect(
      readLedger(ledger)
        .map((e) => e.id)
        .sort(),
    ).toEqual([...ids].sort());
  });

  it('at maxmemory rate-limited jobs still take their turns and run', async () => {
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const client = makeClient(own.server.url, namespace);
    const limited = await Promise.all(
      [1, 2, 3].map(() => client.enqueue('record', [], { rateLimit: '20/s', ignoreResult: true })),
    );
    await own.raw.config('SET', 'maxmemory', '1');

    // A turn is one short string in Redis: refused, the jobs asked again every second and never ran.
    await makeWorker({ broker: own.server.url, namespace, ledger }).start();
    await waitUntil(() => readLedger(ledger).length >= limited.length, 'every limited job ran while Redis was full');
    expect(
      readLedger(ledger)
        .map((e) => e.id)
        .sort(),
    ).toEqual(limited.map((h) => h.id).sort());
  });

  it('a maxmemory-policy that evicts is warned about when a node or a client connects, naming noeviction', async () => {
    await own.raw.config('SET', 'maxmemory-policy', 'volatile-lru');
    const { log, lines } = captureLog();
    await makeWorker({ broker: own.server.url, namespace: uniqueName('ns'), logger: log }).start();
    await waitUntil(() => lines.some((l) => l.maxmemoryPolicy === 'volatile-lru'), 'the policy is warned about');
    const warning = lines.find((l) => l.maxmemoryPolicy === 'volatile-lru');
    expect(warning?.level).toBe(40);
    expect(warning?.msg).toMatch(/results .*Set maxmemory-policy noeviction/);

    // A producer too: its results are the ones that would vanish.
    const producer = captureLog();
    const client = new Client({ broker: own.server.url, namespace: uniqueName('ns'), logger: producer.log });
    try {
      await client.enqueue('add', [1, 1]);
      await waitUntil(() => producer.lines.some((l) => l.maxmemoryPolicy === 'volatile-lru'), 'the client warns too');
    } finally {
      await client.close();
    }
  });
});
