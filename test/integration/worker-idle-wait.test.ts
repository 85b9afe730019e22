/**
 * An idle node over Redis that learns, while it waits, of a delayed job due
 * after its wait would end (the job's timer marker wakes its blocking read)
 * goes back to waiting on its queues: a job enqueued meanwhile runs at once,
 * not once the delayed one is due. (It used to sleep until that due time,
 * deaf to new work for as long as its wait could last, now 10 minutes.)
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { cleanup, makeClient, makeWorker, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

/** The longest blocking wait of a Consumer (MAX_WAIT_MS in src/consumer/consumer.ts). */
const MAX_WAIT_MS = 600_000;

describe('Worker over Redis: an idle wait', () => {
  it('a delayed job due after the wait ends does not keep a new job waiting', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const client = makeClient(url, namespace);
    await makeWorker({ broker: url, namespace }).start();
    // The node found nothing and blocks for MAX_WAIT_MS; let it block a while ...
    await new Promise((resolve) => setTimeout(resolve, 500));
    // ... then a delayed job due just after that wait's end: its marker wakes the node, which learns the due time.
    await client.enqueue('add', [1, 1], { delay: MAX_WAIT_MS - 200 });
    // Once it has (a job enqueued sooner would ride on the fetch the marker triggers), a job to run now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = await client.enqueue('add', [2, 3]);
    expect(await now.result({ timeout: '20s' })).toBe(5);
  });
});
