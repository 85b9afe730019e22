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
import { EnqueueIncompleteError } from 'prefork';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { makeClient, uniqueName } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

const own = ownRedisPerTest();

describe('an enqueue Redis refuses in part', () => {
  it('names the jobs that were enqueued and those that were not', async () => {
    await own.raw.config('SET', 'proto-max-bulk-len', String(1024 * 1024));
    const namespace = uniqueName('ns');
    const client = makeClient(own.server.url, namespace);
    const item = (arg: unknown): { name: string; args: unknown[] } => ({ name: 'echo', args: [arg] });
    // The third is over what Redis takes in one value: its chunk is refused, and with it the rest.
    const err = await client
      .enqueueMany([item(1), item(2), item('x'.repeat(1_500_000)), item(4), item(5)])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnqueueIncompleteError);
    const { enqueued, notEnqueued, message } = err as EnqueueIncompleteError;
    expect([enqueued.length, notEnqueued.length]).toEqual([2, 3]);
    expect(message).toMatch(/^2 of 5 jobs were enqueued, then the broker refused the rest .*bulk length/);
    expect(await own.raw.xlen(`{${namespace}}:q:default`)).toBe(2);
    for (const id of enqueued) expect(await client.handle(id).state()).toMatchObject({ state: 'PENDING' });
    for (const id of notEnqueued) expect(await client.handle(id).state()).toBeUndefined();
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
    const id = /^warning: job (\S+) is enqueued, but the worker nodes could not be listed \(WRONGTYPE/m.exec(
      r.stderr,
    )?.[1];
    expect(id, r.stderr).toBeDefined();
    // It waited for the result (no node runs it): the wait's own timeout ends it.
    expect(r.stderr).toMatch(new RegExp(`no result for job ${id} within 1000 ms`));
    expect(r.status).toBe(1);
    expect(await own.raw.xlen('{prefork}:q:default')).toBe(1);
  });
});
