/**
 * Redis restarted without its data while a Client waits: the job waited
 * for is gone with the rest, so its announcement will never come. The
 * Client, whose blocking read was cut by the restart, asks where the jobs
 * it waits for are: found nowhere (twice, a slice apart), their waits fail
 * with ResultGoneError instead of waiting for ever; a job enqueued again
 * after the restart is waited for as usual.
 */
import { describe, expect, it } from 'vitest';
import { Client, ResultGoneError } from 'prefork';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { makeClient, makeWorker, uniqueName } from '../helpers/worker.js';

const own = ownRedisPerTest();

describe('A Client waiting while Redis restarts without its data', () => {
  it('fails the waits of the jobs lost with ResultGoneError; later jobs are waited for', async () => {
    own.raw.on('error', () => undefined); // it reconnects after the restart, as the client does
    const namespace = uniqueName('ns');
    const client: Client = makeClient(own.server.url, namespace);
    const job = await client.enqueue('echo', [1], { queue: 'later' });
    // Waited for after its first second: its first look finds it in its queue.
    await expect.poll(() => job.state()).toMatchObject({ state: 'PENDING' });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const waited = job.result().catch((e: unknown) => e);
    await expect.poll(() => own.raw.call('CLIENT', 'LIST')).toMatch(/ cmd=blmpop /);
    await own.server.restart();
    const err = await waited;
    expect(err).toBeInstanceOf(ResultGoneError);
    expect(err).toMatchObject({ jobId: job.id });
    await makeWorker({ broker: own.server.url, namespace, queues: ['later'] }).start();
    expect(await (await client.enqueue('echo', [2], { queue: 'later' })).result()).toBe(2);
  });
});
