/**
 * A result larger than Redis takes in one value (proto-max-bulk-len, 1 MB
 * at the least, 512 MB by default) would be refused after the settlement
 * script acked its job: its outcome would be lost. It is stored as a
 * FAILURE that says why instead, for a job and for a workflow's member.
 * proto-max-bulk-len is server-wide, so the test has a redis-server of its own.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { chain, task } from 'prefork';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { makeClient, makeWorker, uniqueName } from '../helpers/worker.js';

const MB = 1024 * 1024;
const own = ownRedisPerTest();
beforeEach(async () => {
  await own.raw.config('SET', 'proto-max-bulk-len', String(MB));
});

describe('a result larger than Redis takes', () => {
  it('is stored as a FAILURE naming the limit, and the node goes on', async () => {
    const namespace = uniqueName('ns');
    const worker = makeWorker({ broker: own.server.url, namespace });
    await worker.start();
    const client = makeClient(own.server.url, namespace);
    const big = await client.enqueue('sized', [MB + 1000]);
    await expect(big.result({ timeout: '20s' })).rejects.toThrow(
      /result of task sized cannot be serialized: it is \d+ bytes of msgpack, and Redis takes values of at most 1048576 bytes \(proto-max-bulk-len\)/,
    );
    expect(await big.state()).toMatchObject({ state: 'FAILURE', error: { name: 'ResultSerializationError' } });
    // One just under the limit is stored whole; the node still runs jobs.
    const fits = await client.enqueue('sized', [MB - 1000]);
    expect(((await fits.result({ timeout: '20s' })) as string).length).toBe(MB - 1000);
    await expect((await client.enqueue('add', [1, 2])).result({ timeout: '20s' })).resolves.toBe(3);
  });

  it('lowered while the node runs: the settlement Redis refuses is stored as such a FAILURE on reconnect', async () => {
    await own.raw.config('SET', 'proto-max-bulk-len', String(512 * MB));
    const namespace = uniqueName('ns');
    const worker = makeWorker({ broker: own.server.url, namespace });
    await worker.start();
    const client = makeClient(own.server.url, namespace);
    await expect((await client.enqueue('add', [1, 1])).result({ timeout: '20s' })).resolves.toBe(2);
    // The node read 512 MB at connect; Redis now refuses the result's value and drops the connection.
    await own.raw.config('SET', 'proto-max-bulk-len', String(MB));
    const big = await client.enqueue('sized', [MB + 1000]);
    await expect(big.result({ timeout: '20s' })).rejects.toThrow(/at most 1048576 bytes \(proto-max-bulk-len\)/);
    await expect((await client.enqueue('add', [2, 3])).result({ timeout: '20s' })).resolves.toBe(5);
  });

  it("fails the workflow's member that returned it, saying why", async () => {
    const namespace = uniqueName('ns');
    const worker = makeWorker({ broker: own.server.url, namespace });
    await worker.start();
    const client = makeClient(own.server.url, namespace);
    const flow = await client.enqueue(chain(task('sized', [MB + 1000]), task('echo')));
    await expect(flow.result({ timeout: '20s' })).rejects.toThrow(/proto-max-bulk-len/);
    await expect((await client.enqueue('add', [2, 2])).result({ timeout: '20s' })).resolves.toBe(4);
  });
});
