/**
 * Which results a job keeps, end to end over both brokers (Client → broker →
 * Worker → children and back): a task defined with `ignoreResult` tells a
 * waiter at once that its value was not kept; the job's own `ignoreResult`
 * wins over the task's either way; the Client's `resultTtl` (and a job's)
 * is how long the worker keeps that job's result.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { NoResultError, ResultGoneError } from 'prefork';
import { brokerFor, cleanup, makeClient, makeWorker, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

describe.each(['memory', 'redis'] as const)('Results kept or not, over %s', (kind) => {
  const setup = async (concurrency = 2) => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    await makeWorker({ broker, namespace, concurrency }).start();
    return { broker, namespace, client: makeClient(broker, namespace) };
  };

  it('a task defined with ignoreResult, enqueued plainly: result() rejects with NoResultError naming the task option', async () => {
    const { client } = await setup();
    const job = await client.enqueue('quiet', [7]);
    const err = await job.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoResultError);
    expect(err).toMatchObject({ code: 'PREFORK_NO_RESULT', jobId: job.id, state: 'SUCCESS' });
    expect((err as Error).message).toMatch(/task "quiet" is defined with ignoreResult/);
    const record = await job.state();
    expect(record).toMatchObject({ id: job.id, task: 'quiet', state: 'SUCCESS', ignoreResult: true });
    expect(record).not.toHaveProperty('value');
  });

  it('the same for a task that fails: the error names the final state, and no error is kept', async () => {
    const { client } = await setup();
    const job = await client.enqueue('quietFails');
    await expect(job.result()).rejects.toMatchObject({ name: 'NoResultError', state: 'FAILURE' });
    const record = await job.state();
    expect(record).toMatchObject({ state: 'FAILURE', ignoreResult: true });
    expect(record).not.toHaveProperty('error');
  });

  it('a handle from another client (not announced to it) learns it from the stored record', async () => {
    const { broker, namespace, client } = await setup();
    const job = await client.enqueue('quiet', [1]);
    const other = makeClient(broker, namespace);
    await expect(other.handle(job.id).result()).rejects.toBeInstanceOf(NoResultError);
  });

  it('enqueued with ignoreResult: false, a job of that task keeps its value', async () => {
    const { client } = await setup();
    const job = await client.enqueue('quiet', [7], { ignoreResult: false });
    expect(await job.result()).toBe(7);
    expect(await job.state()).toMatchObject({ state: 'SUCCESS', value: 7 });
  });

  it('enqueued with ignoreResult: true, nothing is kept, as for any task', async () => {
    const { client } = await setup(1);
    const job = await client.enqueue('quiet', [7], { ignoreResult: true });
    await expect(job.result()).rejects.toThrow(/enqueued with ignoreResult/);
    // One child, fair: a job enqueued after it finishes after it.
    expect(await (await client.enqueue('echo', [1])).result()).toBe(1);
    expect(await job.state()).toBeUndefined();
  });

  it("the Client's resultTtl, and a job's, is how long the worker keeps that job's result", async () => {
    // One child, fair: each job below ends before the next one starts.
    const { broker, namespace, client } = await setup(1);
    const brief = makeClient(broker, namespace, { resultTtl: 1 });
    const short = await brief.enqueue('echo', [1]);
    const perJob = await client.enqueue('echo', [2], { resultTtl: 1 });
    const kept = await client.enqueue('echo', [3]);
    // Settlements reach the broker in order: `kept` settled, so were the two before it.
    expect(await kept.result()).toBe(3);
    await expect.poll(() => perJob.state(), { message: "the job's own resultTtl" }).toBeUndefined();
    await expect.poll(() => short.state(), { message: "the client's resultTtl" }).toBeUndefined();
    await expect(short.result()).rejects.toBeInstanceOf(ResultGoneError);
    expect(await kept.state()).toMatchObject({ state: 'SUCCESS', value: 3 });
  });
});

describe('resultTtl on Redis', () => {
  it("the result key expires after the job's resultTtl, else the client's, else the worker's", async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    await makeWorker({ broker: url, namespace }).start();
    const client = makeClient(url, namespace, { resultTtl: '2m' });
    const plain = makeClient(url, namespace);
    const jobs = [
      await client.enqueue('echo', [1], { resultTtl: '1m' }),
      await client.enqueue('echo', [2]),
      await plain.enqueue('echo', [3]),
    ];
    for (const job of jobs) await job.result();
    const redis = new Redis(url);
    try {
      const ttls = await Promise.all(jobs.map((job) => redis.pttl(`${namespace}:res:${job.id}`)));
      expect(ttls[0]).toBeGreaterThan(0);
      expect(ttls[0]).toBeLessThanOrEqual(60_000);
      expect(ttls[1]).toBeGreaterThan(60_000);
      expect(ttls[1]).toBeLessThanOrEqual(120_000);
      expect(ttls[2]).toBeGreaterThan(120_000);
    } finally {
      redis.disconnect();
    }
  });
});
