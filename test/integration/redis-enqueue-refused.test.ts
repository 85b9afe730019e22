/**
 * An enqueue that Redis refuses in part. The pipeline of an enqueueMany is
 * not a transaction: when some chunks land and a later one is refused, the
 * error names the jobs that were enqueued and those that were not. A script
 * that would add a job and then fail to index it fails before adding it.
 * The Redis settings are server-wide, so each test has a redis-server of its own.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ArgumentsTooLargeError, BrokerUnavailableError, EnqueueIncompleteError, task } from 'prefork';
import { createBroker } from '../../dist/broker/index.js';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { makeClient, silent, uniqueName } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

const own = ownRedisPerTest();

describe('an enqueue Redis refuses in part', () => {
  it('names the jobs that were enqueued and those that were not', async () => {
    const namespace = uniqueName('ns');
    // Queue b's stream is a string: its batch is refused, queue a's lands (the pipeline is no transaction).
    await own.raw.set(`{${namespace}}:q:b`, 'not a stream');
    const client = makeClient(own.server.url, namespace);
    const item = (arg: unknown, queue: string): { name: string; args: unknown[]; options: { queue: string } } => ({
      name: 'echo',
      args: [arg],
      options: { queue },
    });
    const err = await client
      .enqueueMany([item(1, 'a'), item(2, 'a'), item(3, 'b'), item(4, 'b'), item(5, 'b')])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnqueueIncompleteError);
    const { enqueued, notEnqueued, unconfirmed, message } = err as EnqueueIncompleteError;
    expect([enqueued.length, notEnqueued.length, unconfirmed.length]).toEqual([2, 3, 0]);
    expect(message).toMatch(/^2 of 5 jobs were enqueued, then the broker refused the rest .*WRONGTYPE/);
    expect(await own.raw.xlen(`{${namespace}}:q:a`)).toBe(2);
    for (const id of enqueued) expect(await client.handle(id).state()).toMatchObject({ state: 'PENDING' });
    for (const id of notEnqueued) expect(await client.handle(id).state()).toBeUndefined();
  });

  it('says which item each job was, so those not enqueued can be enqueued again, and only those', async () => {
    const namespace = uniqueName('ns');
    await own.raw.set(`{${namespace}}:q:b`, 'not a stream');
    const client = makeClient(own.server.url, namespace);
    // No ids given: the ids in the error were made at enqueue, and name no item the caller has.
    const items = [
      { name: 'echo', args: [1], options: { queue: 'a' } },
      { name: 'echo', args: [2], options: { queue: 'b' } },
      { name: 'echo', args: [3], options: { queue: 'a', onSuccess: task('echo', [], { queue: 'a' }) } },
      { name: 'echo', args: [4], options: { queue: 'b' } },
      { name: 'echo', args: [5], options: { queue: 'a' } },
    ];
    const err = await client.enqueueMany(items).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnqueueIncompleteError);
    const { byItem } = err as EnqueueIncompleteError;
    expect(byItem).toEqual(['enqueued', 'notEnqueued', 'enqueued', 'notEnqueued', 'enqueued']);
    await own.raw.del(`{${namespace}}:q:b`);
    await client.enqueueMany(items.filter((_, i) => byItem?.[i] === 'notEnqueued'));
    expect(await own.raw.xlen(`{${namespace}}:q:a`)).toBe(3);
    expect(await own.raw.xlen(`{${namespace}}:q:b`)).toBe(2);
  });

  it('a job over proto-max-bulk-len is refused before anything is sent, naming the task and the sizes', async () => {
    await own.raw.config('SET', 'proto-max-bulk-len', String(1024 * 1024));
    const namespace = uniqueName('ns');
    const client = makeClient(own.server.url, namespace);
    const stream = `{${namespace}}:q:default`;
    const items: { name: string; args: unknown[] }[] = [];
    for (let i = 0; i < 50_000; i++) items.push({ name: 'echo', args: [i] });
    // One in the middle is over what Redis takes in one value: sent, Redis would drop the connection.
    const huge = { name: 'huge', args: ['x'.repeat(1_500_000)] };
    const batch = [...items.slice(0, 25_000), huge, ...items.slice(25_000)];
    // A call of its own on the same connection, in flight meanwhile: the connection is not dropped under it.
    const read = client.getResult('no-such-job');
    const err = await client.enqueueMany(batch).catch((e: unknown) => e);
    await expect(read).resolves.toBeUndefined();
    expect(err).toBeInstanceOf(ArgumentsTooLargeError);
    expect(err).toMatchObject({ task: 'huge', limit: 1024 * 1024, bound: 'proto-max-bulk-len' });
    expect((err as Error).message).toMatch(
      /^the arguments of task huge make a job of \d+ bytes, over the 1048576 bytes Redis takes in one value \(proto-max-bulk-len\): nothing was enqueued$/,
    );
    expect(await own.raw.exists(stream)).toBe(0);
    // Alone, with its own id, delayed, or with a callback (a workflow): the same, and nothing added.
    for (const options of [{}, { id: 'own' }, { delay: 60_000 }, { onSuccess: task('echo') }])
      await expect(client.enqueue('huge', huge.args, options)).rejects.toThrow(/proto-max-bulk-len/);
    expect(await own.raw.keys(`{${namespace}}:*`)).toEqual([]);
    // The batch again without it: every other job once.
    await client.enqueueMany(items);
    expect(await own.raw.xlen(stream)).toBe(50_000);
  });

  it('a value over a proto-max-bulk-len lowered since: Redis drops the connection; no job it may have taken is called refused', async () => {
    const namespace = uniqueName('ns');
    const client = makeClient(own.server.url, namespace);
    // Connected before the limit is lowered: the client read 512 MB, and sends the job.
    await client.enqueue('echo', [0]);
    await own.raw.config('SET', 'proto-max-bulk-len', String(1024 * 1024));
    const item = (arg: unknown): { name: string; args: unknown[] } => ({ name: 'echo', args: [arg] });
    // The third is over what Redis takes in one value: Redis refuses it and drops the connection.
    const err = await client
      .enqueueMany([item(1), item(2), item('x'.repeat(1_500_000)), item(4), item(5)])
      .catch((e: unknown) => e);
    // Whether the replies before the refusal are read before the connection drops is a race of TCP:
    // either way no job Redis may have taken is called refused, and every job is accounted for.
    const inStream = await own.raw.xlen(`{${namespace}}:q:default`);
    if (err instanceof EnqueueIncompleteError) {
      expect(err.enqueued.length + err.notEnqueued.length + err.unconfirmed.length).toBe(5);
      expect(err.enqueued.length).toBeLessThanOrEqual(inStream);
      expect(err.notEnqueued.length).toBeGreaterThan(0);
      for (const id of err.notEnqueued) expect(await client.handle(id).state()).toBeUndefined();
    } else {
      expect(err).toBeInstanceOf(BrokerUnavailableError);
      expect((err as Error).message).toMatch(/may or may not have been applied/);
    }
    expect(inStream).toBeLessThanOrEqual(3);
  });

  it('adds nothing when the job index is of the wrong type', async () => {
    const namespace = uniqueName('ns');
    await own.raw.set(`{${namespace}}:jobs`, 'not a hash');
    const client = makeClient(own.server.url, namespace);
    await expect(client.enqueue('add', [1, 2])).rejects.toThrow(
      /WRONGTYPE prefork: the job index \{.*\}:jobs is a string, not a hash: nothing was enqueued/,
    );
    await expect(client.enqueue('add', [1, 2], { delay: 60_000 })).rejects.toThrow(/WRONGTYPE prefork/);
    await expect(client.enqueue('add', [1, 2], { id: 'own-id' })).rejects.toThrow(/WRONGTYPE prefork/);
    expect(await own.raw.exists(`{${namespace}}:q:default`, `{${namespace}}:delayed:default`)).toBe(0);
  });

  it("a schedule tick's claim adds nothing, and moves the entry on by no tick, when the job index is of the wrong type", async () => {
    const namespace = uniqueName('ns');
    const broker = createBroker(own.server.url, { namespace, logger: silent });
    await broker.connect();
    try {
      const { states } = await broker.publishSchedule([{ name: 'e', definition: '{}', hash: 'h' }]);
      const last = states[0]?.last ?? 0;
      await own.raw.set(`{${namespace}}:jobs`, 'not a hash');
      const job = {
        id: 'tick-1',
        task: 'tick',
        queue: 'default',
        payload: new Uint8Array([0x90]),
        attempt: 0,
        redeliveries: 0,
        options: {},
        enqueuedAt: Date.now(),
        scheduledFor: last + 1,
      };
      // The broker's clock passes the tick.
      await new Promise((resolve) => setTimeout(resolve, 5));
      // The scheduler makes a refused claim again: a job a refused claim left in the queue could be added twice.
      await expect(
        broker.claimTicks([{ name: 'e', hash: 'h', expectedLast: last, newLast: last + 1, jobs: [job] }]),
      ).rejects.toThrow(/WRONGTYPE prefork: the job index .* is a string, not a hash: nothing was enqueued/);
      expect(await own.raw.exists(`{${namespace}}:q:default`)).toBe(0);
      expect(await own.raw.hget(`{${namespace}}:sched:e`, 'last')).toBe(String(last));
    } finally {
      await broker.close();
    }
  });

  it('enqueue --wait: a failure to list the nodes is a warning naming the job, not a failed enqueue', async () => {
    await own.raw.set('{prefork}:nodes', 'not a sorted set');
    const r = spawnSync(
      process.execPath,
      [CLI, 'enqueue', 'add', '1', '2', '--wait', '--timeout', '1s', '-b', own.server.url],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    const id =
      /^warning: job (\S+) is enqueued, but the worker nodes could not be listed \(Redis refused the read of the nodes: WRONGTYPE .*\{prefork\}:nodes is a string, not a zset\)\); waiting/m.exec(
        r.stderr,
      )?.[1];
    expect(id, r.stderr).toBeDefined();
    // It waited for the result (no node runs it): the wait's own timeout ends it.
    expect(r.stderr).toMatch(new RegExp(`no result for job ${id} within 1000 ms`));
    expect(r.status).toBe(1);
    expect(await own.raw.xlen('{prefork}:q:default')).toBe(1);
  });
});
