/**
 * A workflow's record over both brokers: kept while the workflow is pending
 * (a step may run longer than the result TTL), expiring only after its end
 * and the end of every callback it started;
 * a handle whose workflow has no record (gone, or never enqueued) rejects
 * with ResultGoneError instead of waiting for ever. A later step's job
 * counts as enqueued when its step starts.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { chain, ResultGoneError, task, WorkflowHandle } from 'prefork';
import { createBroker } from '../../dist/broker/index.js';
import type { NewJob } from '../../dist/broker/types.js';
import { encodeBody } from '../../dist/protocol/codec.js';
import { compileWorkflow } from '../../dist/workflow/compile.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { brokerFor, cleanup, makeClient, makeWorker, newLedger, silent, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

/** The ledger lines `note` wrote (tag, then its other arguments as JSON), in order, without their times. */
function tagged(ledger: string): string[] {
  if (!existsSync(ledger)) return [];
  return readFileSync(ledger, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(0, line.lastIndexOf(' ')));
}

describe.each(['memory', 'redis'] as const)("A workflow's record over %s", (kind) => {
  it('outlives the result TTL while a step runs longer: the next step still starts', async () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('wf');
    await makeWorker({ broker, namespace, ledger: newLedger() }).start();
    const client = makeClient(broker, namespace, { resultTtl: '1s' });
    // The first step runs 2.5 s, past the 1 s TTL of the workflow's record.
    const handle = await client.enqueue(chain(task('record', [2500]), task('echo', ['done'], { immutable: true })));
    expect(await handle.result({ timeout: 30_000 })).toBe('done');
  });

  it("outlives the result TTL while a callback waits after the workflow's end: that callback's own still starts", async () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('wf');
    const ledger = newLedger();
    await makeWorker({ broker, namespace, ledger }).start();
    const client = makeClient(broker, namespace, { resultTtl: '1s' });
    // The last step's onSuccess waits in a queue no node serves yet; its own onSuccess comes after it.
    const later = task('note', ['first'], { queue: 'later', onSuccess: task('note', ['second']) });
    const handle = await client.enqueue(chain(task('add', [1, 2]), task('double', [], { onSuccess: later })));
    expect(await handle.result({ timeout: 30_000 })).toBe(6);
    // The last step's result, written with the workflow's end and kept as long, has expired: so has its TTL.
    const last = (await handle.state())?.tree.children?.[1]?.id as string;
    await expect.poll(() => client.getResult(last)).toBeUndefined();
    await makeWorker({ broker, namespace, ledger, queues: ['later'] }).start();
    await expect.poll(() => tagged(ledger)).toEqual(['first [6]', 'second [[6]]']);
    // Its last callback ended: now the TTL runs.
    await expect.poll(() => handle.state()).toBeUndefined();
  }, 60_000);

  it("a later step's enqueuedAt is when it started, after the step before it finished", async () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('wf');
    await makeWorker({ broker, namespace, ledger: newLedger() }).start();
    const client = makeClient(broker, namespace);
    const handle = await client.enqueue(chain(task('record', [300]), task('echo', ['done'], { immutable: true })));
    expect(await handle.result({ timeout: 30_000 })).toBe('done');
    const [first, second] = (await handle.state())?.tree.children?.map((c) => c.id as string) ?? [];
    const [one, two] = await Promise.all([client.getResult(first as string), client.getResult(second as string)]);
    expect(one?.finishedAt).toBeGreaterThan(0);
    expect(two?.enqueuedAt).toBeGreaterThanOrEqual(one?.finishedAt as number);
    expect(two?.startedAt).toBeGreaterThanOrEqual(two?.enqueuedAt as number);
  });

  it('a workflow enqueued again (its call sent again after a lost reply) starts once', async () => {
    const b = createBroker(brokerFor(kind, inject('redisUrl')), { namespace: uniqueName('wf'), logger: silent });
    await b.connect();
    try {
      const id = randomUUID();
      const build = (sig: { name: string; args: readonly unknown[] }): NewJob => ({
        id: randomUUID(),
        task: sig.name,
        queue: 'default',
        payload: encodeBody([...sig.args]),
        attempt: 0,
        redeliveries: 0,
        options: {},
        enqueuedAt: Date.now(),
      });
      const workflow = compileWorkflow(chain(task('add', [1, 2]), task('double')), id, build);
      expect(await b.enqueue([], [workflow])).toEqual([]);
      expect(await b.enqueue([], [workflow])).toEqual([]);
      expect((await b.counts(['default']))[0]).toMatchObject({ waiting: 1 });
      expect(await b.getWorkflow(id)).toMatchObject({ id, state: 'PENDING' });
    } finally {
      await b.close();
    }
  });

  it('a handle of a workflow without a record rejects with ResultGoneError', async () => {
    const client = makeClient(brokerFor(kind, inject('redisUrl')), uniqueName('wf'));
    const id = randomUUID();
    const err = await new WorkflowHandle(id, client).result({ timeout: 15_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResultGoneError);
    expect(err).toMatchObject({ jobId: id });
  });
});

describe("A workflow's record on Redis", () => {
  it('getResult of an id without a result reads the workflow record in the same round trip', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('wf');
    const proxy = await TcpProxy.start(url);
    try {
      const client = makeClient(proxy.url, namespace);
      const flow = await client.enqueue(chain(task('add', [1, 2], { queue: 'unserved' }), task('double')));
      for (const id of [randomUUID(), flow.id]) {
        proxy.watch(`:wf:${id}`);
        proxy.holdReplies();
        const reading = client.getResult(id);
        // The workflow's record is asked for while no reply has come back: with the result's GET.
        await vi.waitFor(() => expect(proxy.sentCount(`:wf:${id}`)).toBe(1));
        proxy.releaseReplies();
        const record = await reading;
        if (id === flow.id) expect(record).toMatchObject({ id, task: 'workflow', state: 'PENDING' });
        else expect(record).toBeUndefined();
      }
    } finally {
      await proxy.close();
    }
  });

  it("a workflow's tree and failure read its jobs' results as jobs': no workflow record asked for under their ids", async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('wf');
    const proxy = await TcpProxy.start(url);
    const client = makeClient(proxy.url, namespace);
    try {
      // No node serves the queue: the first step waits, the second has not started (neither has a result).
      const pending = await client.enqueue(chain(task('add', [1, 2], { queue: 'unserved' }), task('double')));
      const waiting = (await pending.state())?.tree.children?.map((c) => c.id as string) ?? [];
      expect(waiting).toHaveLength(2);
      for (const id of waiting) proxy.watch(`:wf:${id}`);
      expect((await pending.state())?.tree.children?.map((c) => c.state)).toEqual(['PENDING', 'WAITING']);
      expect(waiting.map((id) => proxy.sentCount(`:wf:${id}`))).toEqual([0, 0]);

      await makeWorker({ broker: url, namespace, ledger: newLedger() }).start();
      const failed = await client.enqueue(chain(task('boom', [1]), task('double')));
      await expect.poll(async () => (await failed.state())?.state, { timeout: 30_000 }).toBe('FAILURE');
      const steps = (await failed.state())?.tree.children?.map((c) => c.id as string) ?? [];
      expect(steps).toHaveLength(2);
      for (const id of steps) proxy.watch(`:wf:${id}`);
      // The failed step's own error (its result read), the step after it skipped (no result).
      await expect(failed.result({ timeout: 30_000 })).rejects.toMatchObject({ message: 'boom 1', code: 'E_BOOM' });
      expect(steps.map((id) => proxy.sentCount(`:wf:${id}`))).toEqual([0, 0]);
    } finally {
      await client.close(); // before its proxy goes: its blocked read ends now
      await proxy.close();
    }
  });

  it('has no expiry while pending, the TTL once ended; deleted while waited for, the handle rejects', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('wf');
    const redis = new Redis(url);
    try {
      const client = makeClient(url, namespace, { resultTtl: '1h' });
      // No node serves the queue: the workflow stays pending.
      const pending = await client.enqueue(chain(task('add', [1, 2], { queue: 'unserved' }), task('double')));
      expect(await redis.pttl(`{${namespace}}:wf:${pending.id}`)).toBe(-1);
      const waited = pending.result({ timeout: 30_000 }).catch((e: unknown) => e);
      // Read after the wait's own first read on the same connection: that one found the record.
      expect(await client.getResult(pending.id)).toMatchObject({ state: 'PENDING' });
      expect(await redis.del(`{${namespace}}:wf:${pending.id}`)).toBe(1);
      expect(await waited).toBeInstanceOf(ResultGoneError);

      await makeWorker({ broker: url, namespace, ledger: newLedger() }).start();
      const ended = await client.enqueue(chain(task('add', [1, 2]), task('double')));
      expect(await ended.result({ timeout: 30_000 })).toBe(6);
      const ttl = await redis.pttl(`{${namespace}}:wf:${ended.id}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
    } finally {
      redis.disconnect();
    }
  });
});
