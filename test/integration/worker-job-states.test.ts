/**
 * `handle.state()` tells where a job is at each step, with real workers over
 * both brokers: waiting in its queue, delayed until its due time, reserved
 * or running on a node (with the child's pid under trackStarted), retrying
 * (the failed attempt and when the next is due), done, failed, and unknown.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { brokerFor, cleanup, makeClient, makeWorker, newLedger, readLedger, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

const HOUR = 3_600_000;

describe.each(['memory', 'redis'] as const)('job states over %s', (kind) => {
  const setup = () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    return { broker, namespace, client: makeClient(broker, namespace) };
  };

  it('waiting in its queue, then delayed until its due time', async () => {
    const { client } = setup();
    const waiting = await client.enqueue('add', [1, 2], { queue: 'nobody' });
    expect(await waiting.state()).toMatchObject({ id: waiting.id, task: 'add', queue: 'nobody', state: 'PENDING' });
    expect((await waiting.state())?.dueAt).toBeUndefined();
    const before = Date.now();
    const delayed = await client.enqueue('add', [1, 2], { queue: 'nobody', delay: '1h' });
    const shown = await delayed.state();
    expect(shown).toMatchObject({ state: 'PENDING', queue: 'nobody', retries: 0 });
    expect(shown?.dueAt).toBeGreaterThanOrEqual(before + HOUR - 60_000);
    expect(shown?.dueAt).toBeLessThanOrEqual(Date.now() + HOUR + 60_000);
  });

  it('running: on which node, and with trackStarted the pid and since when', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    await makeWorker({ broker, namespace, ledger, name: 'node-a', trackStarted: true }).start();
    const job = await client.enqueue('record', [60_000]);
    await expect.poll(() => readLedger(ledger).length, { message: 'the job started' }).toBe(1);
    await expect.poll(async () => (await job.state())?.state).toBe('STARTED');
    const shown = await job.state();
    expect(shown).toMatchObject({ id: job.id, node: 'node-a', retries: 0 });
    expect(shown?.pid).toEqual(expect.any(Number));
    expect(shown?.startedAt).toBeGreaterThan(0);
  });

  it('reserved by a node that does not track starts: RECEIVED, naming the node', async () => {
    const { broker, namespace, client } = setup();
    const ledger = newLedger();
    await makeWorker({ broker, namespace, ledger, name: 'node-b' }).start();
    const job = await client.enqueue('record', [60_000]);
    await expect.poll(() => readLedger(ledger).length, { message: 'the job started' }).toBe(1);
    const shown = await job.state();
    expect(shown).toMatchObject({ id: job.id, state: 'RECEIVED', node: 'node-b', queue: 'default' });
    expect(shown?.receivedAt).toBeGreaterThan(0);
  });

  it('retrying: the failed attempt, its error, and when the next one is due', async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    const before = Date.now();
    const job = await client.enqueue('flaky', [uniqueName('k'), 99], {
      retries: 2,
      backoff: { type: 'fixed', delay: '1h', cap: '2h', jitter: false },
    });
    await expect.poll(async () => (await job.state())?.state).toBe('RETRY');
    const shown = await job.state();
    expect(shown).toMatchObject({ state: 'RETRY', retries: 0, error: { message: 'flaky attempt 1' } });
    expect(shown?.dueAt).toBeGreaterThanOrEqual(before + HOUR - 60_000);
    expect(shown?.dueAt).toBeLessThanOrEqual(Date.now() + HOUR + 60_000);
  });

  it('done, failed, and unknown', async () => {
    const { broker, namespace, client } = setup();
    await makeWorker({ broker, namespace }).start();
    const ok = await client.enqueue('add', [2, 3]);
    expect(await ok.result()).toBe(5);
    expect(await ok.state()).toMatchObject({ state: 'SUCCESS', value: 5 });
    const bad = await client.enqueue('flaky', [uniqueName('k'), 99]);
    await expect(bad.result()).rejects.toThrow('flaky attempt 1');
    expect(await bad.state()).toMatchObject({ state: 'FAILURE', error: { message: 'flaky attempt 1' } });
    expect(await client.handle('no-such-job').state()).toBeUndefined();
  });
});
