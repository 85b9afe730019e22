/**
 * A wait for a job of this client that is nowhere: it waits in no queue, no
 * node holds it and no result is stored. Its announcement will never come
 * (the job was purged; or it ended, and its result and the reply list that
 * announced it expired; or Redis lost them), so without a look at where the
 * job is, `result()` would wait for ever. It rejects with ResultGoneError
 * instead, naming the job; a job that still waits is left waiting.
 */
import { afterEach, describe, expect, inject, it, onTestFinished } from 'vitest';
import { ClientClosedError, ResultGoneError } from 'prefork';
import { createBroker, type Broker } from 'prefork/broker';
import { brokerFor, cleanup, makeClient, makeWorker, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

describe.each(['memory', 'redis'] as const)('A wait for a job that is nowhere, over %s', (kind) => {
  const setup = async (): Promise<{ url: string; namespace: string; admin: Broker }> => {
    const url = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    // Over memory://, a broker of the same name shares the client's state.
    const admin = createBroker(url, { namespace });
    await admin.connect();
    onTestFinished(() => admin.close());
    return { url, namespace, admin };
  };

  it('a job purged before its wait began: ResultGoneError naming it and the purge', async () => {
    const { url, namespace, admin } = await setup();
    const client = makeClient(url, namespace);
    const job = await client.enqueue('echo', [1], { queue: 'idle' });
    const other = await client.enqueue('echo', [2], { queue: 'idle', delay: '1h' });
    expect(await admin.purge('idle')).toBe(2);
    const errors = await Promise.all([job, other].map((handle) => handle.result().catch((e: unknown) => e)));
    for (const [i, handle] of [job, other].entries()) {
      expect(errors[i]).toBeInstanceOf(ResultGoneError);
      expect(errors[i]).toMatchObject({ code: 'PREFORK_RESULT_GONE', jobId: handle.id });
      expect((errors[i] as Error).message).toMatch(/in no queue, held by no node .* purged/);
    }
  });

  it('a job purged while it is waited for (its first look skipped): the same', async () => {
    const { url, namespace, admin } = await setup();
    const client = makeClient(url, namespace);
    const job = await client.enqueue('echo', [1], { queue: 'idle' });
    const waited = job.result().catch((e: unknown) => e);
    expect(await admin.purge('idle')).toBe(1);
    expect(await waited).toBeInstanceOf(ResultGoneError);
  });

  it("a duplicate's handle of a job that ended keeping no result: the same, instead of polling for ever", async () => {
    const { url, namespace } = await setup();
    const client = makeClient(url, namespace);
    const first = await client.enqueue('echo', [1], { id: uniqueName('own'), ignoreResult: true });
    // Its own id enqueued again while it waits: the handle of the job it duplicates, which keeps no result.
    const again = await client.enqueue('echo', [1], { id: first.id });
    expect(again).toMatchObject({ id: first.id, duplicate: true, ignoreResult: false });
    await makeWorker({ broker: url, namespace, concurrency: 1 }).start();
    const err = await again.result({ timeout: 60_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResultGoneError);
    expect(err).toMatchObject({ jobId: first.id });
    expect(await again.state()).toBeUndefined();
  });

  it('a job whose result and announcement expired before its wait: the same; a waiting job waits on', async () => {
    const { url, namespace } = await setup();
    await makeWorker({ broker: url, namespace, concurrency: 1, resultTtl: 1 }).start();
    const client = makeClient(url, namespace);
    const ended = await client.enqueue('echo', [1]);
    const waiting = await client.enqueue('echo', [2], { queue: 'idle' });
    // Found in its queue, then nowhere: it ran, and its result expired (1 ms) with its announcement.
    await expect.poll(() => ended.state()).toBeUndefined();
    const stillWaiting = waiting.result().catch((e: unknown) => e);
    const err = await ended.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResultGoneError);
    expect((err as Error).message).toMatch(/expired/);
    // Looked at alongside the gone one, at least as long: found in its queue, it is no loss.
    expect(await waiting.state()).toMatchObject({ state: 'PENDING', queue: 'idle' });
    await client.close();
    expect(await stillWaiting).toBeInstanceOf(ClientClosedError);
  });
});
