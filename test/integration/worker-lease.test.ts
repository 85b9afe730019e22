/**
 * What a node does when it cannot be sure of its lease. Paused (SIGSTOP)
 * past its lease, it starts none of the jobs it held before it has checked
 * the lease: another node recovered them. Its registration gone while the
 * lease still ran (Redis lost its data), it says so, and keeps and runs its
 * jobs: nobody else has them; what it reserved under the old id moves to the
 * new one, whose lease covers it.
 */
import { Redis } from 'ioredis';
import type { Worker } from 'prefork';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { GROUP } from '../../dist/broker/redis/keys.js';
import { waitUntil } from '../helpers/wait.js';
import { createBroker, type Broker } from 'prefork/broker';
import { startRedisServer } from '../../scripts/redis.mjs';
import {
  captureLog,
  cleanup,
  makeClient,
  makeWorker,
  newLedger,
  readLedger,
  silent,
  startNode,
  uniqueName,
} from '../helpers/worker.js';

afterEach(cleanup);

function runsPerJob(ledger: string): Map<string, number> {
  const runs = new Map<string, number>();
  for (const { id } of readLedger(ledger)) runs.set(id, (runs.get(id) ?? 0) + 1);
  return runs;
}

/**
 * Starts `worker` (one child, prefetch 4), enqueues three jobs of `ms` each
 * through a client of `broker`, and waits until one runs and two wait in the node.
 */
async function holdThree(worker: Worker, broker: string, namespace: string, ledger: string, ms: number) {
  await worker.start();
  const jobs = await makeClient(broker, namespace).enqueueMany(
    Array.from({ length: 3 }, () => ({ name: 'record' as const, args: [ms] })),
  );
  await waitUntil(
    () => readLedger(ledger).length === 1 && worker.stats().consumer.fetched === 3,
    'one job runs, two wait in the node',
  );
  return jobs;
}

/**
 * Loses the registration of `worker` and keeps its reservations (as when a
 * read lands under an id Redis forgot), then tells it. Returns the lost id.
 */
async function loseRegistration(raw: Redis, namespace: string, worker: Worker): Promise<string> {
  const before = worker.nodeId;
  await raw.zrem(`{${namespace}}:nodes`, before);
  await worker.reportFenced(before);
  return before;
}

/** The consumers that hold pending entries of `stream`. */
async function pendingOwners(raw: Redis, stream: string): Promise<string[]> {
  const [, , , held] = (await raw.xpending(stream, GROUP)) as [number, unknown, unknown, [string, string][] | null];
  return (held ?? []).map(([consumer]) => consumer);
}

/** `broker`, whose first call that moves an old id's reservations fails as a dropped connection would, before reaching Redis. */
function withFailedAdoption(broker: Broker): Broker {
  let failed = false;
  return new Proxy(broker, {
    get(target, prop) {
      if (prop === 'register')
        return (...args: Parameters<Broker['register']>) => {
          if (args[1] === undefined || failed) return target.register(...args);
          failed = true;
          return Promise.reject(new Error('Connection is closed.'));
        };
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('Worker and its lease', () => {
  it('a node paused past its lease starts none of its buffered jobs on resuming: they ran elsewhere, once', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const leaseMs = 2_000;
    const admin = createBroker(url, { namespace, logger: silent });
    await admin.connect();
    try {
      const a = await startNode(
        { broker: url, namespace, concurrency: 1, prefetchMultiplier: 4, leaseMs, name: 'node-a' },
        ledger,
      );
      const client = makeClient(url, namespace);
      const jobs = await client.enqueueMany(
        Array.from({ length: 4 }, () => ({ name: 'record' as const, args: [300] })),
      );
      await waitUntil(
        async () => readLedger(ledger).length === 1 && (await admin.counts(['default']))[0]?.reserved === 4,
        'node A runs one job and holds the other three',
      );
      const first = readLedger(ledger)[0]!.id;
      // Only the parent stops: its child finishes the running job, whose result waits in the pipe.
      a.proc.kill('SIGSTOP');
      const b = makeWorker({ broker: url, namespace, ledger, concurrency: 2, leaseMs, name: 'node-b' });
      await b.start();
      // Node B recovers node A's jobs once A's lease runs out, and runs all four.
      expect(await Promise.all(jobs.map((j) => j.result({ timeout: 60_000 })))).toEqual(jobs.map((j) => j.id));
      await b.stop();

      a.proc.kill('SIGCONT');
      await waitUntil(
        async () => (await admin.listNodes()).some((n) => n.name === 'node-a' && n.id !== a.nodeId),
        'node A found its lease gone and registered again',
      );
      // A job enqueued now runs on node A, after anything it may have started on resuming.
      expect(await (await client.enqueue('record', [0], { id: 'marker' })).result({ timeout: 30_000 })).toBe('marker');

      const runs = runsPerJob(ledger);
      // The job that was running when A stopped ran on both nodes (at least once); the buffered ones only on B.
      expect(runs.get(first)).toBe(2);
      for (const job of jobs.filter((j) => j.id !== first)) expect(runs.get(job.id)).toBe(1);
      expect(runs.get('marker')).toBe(1);
    } finally {
      await admin.close();
    }
  });

  it("a node paused past its lease: its late settlement of a job run elsewhere leaves that run's result", async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const leaseMs = 2_000;
    const a = await startNode({ broker: url, namespace, concurrency: 1, leaseMs, name: 'node-a' }, ledger);
    const client = makeClient(url, namespace);
    const job = await client.enqueue('record', [300]);
    await waitUntil(() => readLedger(ledger).length === 1, 'node A runs the job');
    // Only the parent stops: its child finishes the job, whose result waits in the pipe.
    a.proc.kill('SIGSTOP');
    const b = makeWorker({ broker: url, namespace, ledger, concurrency: 1, leaseMs, name: 'node-b' });
    await b.start();
    expect(await job.result({ timeout: 60_000 })).toBe(job.id);
    await b.stop();
    expect((await client.getResult(job.id))?.node).toBe('node-b');

    a.proc.kill('SIGCONT');
    // A job run by node A now settles after A's late settlement of the first (one Acker, in order).
    expect(await (await client.enqueue('record', [0], { id: 'marker' })).result({ timeout: 30_000 })).toBe('marker');
    expect((await client.getResult('marker'))?.node).toBe('node-a');
    expect(runsPerJob(ledger).get(job.id)).toBe(2);
    // Node A's run was not the job's outcome: node B's stays stored, and a new waiter gets it.
    expect(await client.getResult(job.id)).toMatchObject({ state: 'SUCCESS', node: 'node-b' });
    expect(await makeClient(url, namespace).handle(job.id).result({ timeout: 5_000 })).toBe(job.id);
  });

  it('Redis lost its data: the node says its registration vanished, keeps the jobs it held and runs them', async () => {
    const server = await startRedisServer();
    try {
      const namespace = uniqueName('ns');
      const ledger = newLedger();
      const { log, lines } = captureLog();
      const worker = makeWorker({
        broker: server.url,
        namespace,
        ledger,
        concurrency: 1,
        prefetchMultiplier: 4,
        logger: log,
      });
      const jobs = await holdThree(worker, server.url, namespace, ledger, 1_500);
      const before = worker.nodeId;
      // No persistence: the restarted Redis has no queues, no results and no node registrations.
      await server.restart();
      await waitUntil(() => worker.nodeId !== before, 'the node found its registration gone and registered again');

      const said = lines.filter((l) => l.oldNodeId === before).map((l) => String(l.msg));
      expect(said).toEqual([expect.stringMatching(/registration vanished .*Redis lost its data/)]);
      expect(lines.some((l) => /another node recover/.test(String(l.msg)))).toBe(false);
      // Nobody else had its jobs: they run here, and their results land in the new Redis.
      expect(await Promise.all(jobs.map((j) => j.result({ timeout: 30_000 })))).toEqual(jobs.map((j) => j.id));
      expect([...runsPerJob(ledger).values()]).toEqual([1, 1, 1]);
    } finally {
      await cleanup();
      await server.stop();
    }
  });

  it('a registration that vanished: the new id takes over what the old one reserved, and every job runs once', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const { log, lines } = captureLog();
    const raw = new Redis(url);
    try {
      const worker = makeWorker({ broker: url, namespace, ledger, concurrency: 1, prefetchMultiplier: 4, logger: log });
      const jobs = await holdThree(worker, url, namespace, ledger, 1_500);
      const stream = `{${namespace}}:q:default`;
      const before = await loseRegistration(raw, namespace, worker);
      expect(worker.nodeId).not.toBe(before);
      const took = lines.find((l) => l.oldNodeId === before && typeof l.jobs === 'number');
      // The two waiting jobs at least: the one running may have ended meanwhile.
      expect(took?.jobs).toBeGreaterThanOrEqual(2);
      expect(await pendingOwners(raw, stream)).toEqual([worker.nodeId]);
      const consumers = (await raw.xinfo('CONSUMERS', stream, GROUP)) as unknown[][];
      expect(consumers.map((c) => c[1])).toEqual([worker.nodeId]);
      expect(await Promise.all(jobs.map((j) => j.result({ timeout: 30_000 })))).toEqual(jobs.map((j) => j.id));
      expect([...runsPerJob(ledger).values()]).toEqual([1, 1, 1]);
    } finally {
      raw.disconnect();
    }
  });

  it('a takeover whose call failed is tried again after the next heartbeat, and every job runs once', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const { log, lines } = captureLog();
    const raw = new Redis(url);
    // A lease of 2 s: a heartbeat every second.
    const real = createBroker(url, { namespace, logger: silent, leaseMs: 2_000 });
    const worker = makeWorker({
      broker: withFailedAdoption(real),
      ledger,
      concurrency: 1,
      prefetchMultiplier: 4,
      logger: log,
    });
    try {
      const jobs = await holdThree(worker, url, namespace, ledger, 2_500);
      const stream = `{${namespace}}:q:default`;
      const before = await loseRegistration(raw, namespace, worker);
      const after = worker.nodeId;
      expect(after).not.toBe(before);
      expect(lines.some((l) => /trying again after the next heartbeat/.test(String(l.msg)))).toBe(true);
      // Still under the old id: the first call failed.
      expect(await pendingOwners(raw, stream)).toContain(before);
      await waitUntil(
        () => lines.some((l) => l.oldNodeId === before && typeof l.jobs === 'number'),
        'a heartbeat retries the takeover',
      );
      expect(await pendingOwners(raw, stream)).toEqual([after]);
      expect(await Promise.all(jobs.map((j) => j.result({ timeout: 30_000 })))).toEqual(jobs.map((j) => j.id));
      expect([...runsPerJob(ledger).values()]).toEqual([1, 1, 1]);
    } finally {
      raw.disconnect();
      await worker.stop();
      await real.close();
    }
  });
});
