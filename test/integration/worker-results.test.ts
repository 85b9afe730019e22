/**
 * Which results a job keeps, end to end over both brokers (Client → broker →
 * Worker → children and back): a task defined with `ignoreResult` tells a
 * waiter at once that its value was not kept; the job's own `ignoreResult`
 * wins over the task's either way.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { NoResultError } from 'prefork';
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
});
