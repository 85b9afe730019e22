/**
 * A Client and `dead retry`, end to end over both brokers (Client → broker →
 * Worker → children and back): a job's failure the client already read from
 * its reply list (while it waited for another job) is parked for the job's
 * wait to come; once the job is retried from the dead set, that failure is no
 * longer its outcome, and the wait waits for the new run. The node that ran
 * the first run stops before the retry and another starts once the wait
 * began, so the new run's announcement cannot come first.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ResultGoneError, type Client, type JobHandle } from 'prefork';
import type { Broker } from '../../dist/broker/types.js';
import { brokerFor, cleanup, countsOf, makeClient, makeWorker, newLedger, uniqueName } from '../helpers/worker.js';
import { waitUntil } from '../helpers/wait.js';

afterEach(cleanup);

/** Starts a wait for the handle's result (30 s at most); a rejection left unawaited (the test failed) is not reported. */
function waitFor(handle: JobHandle): Promise<unknown> {
  const waiting = handle.result({ timeout: '30s' });
  waiting.catch(() => undefined);
  return waiting;
}

async function deadIn(client: Client, queue: string): Promise<number> {
  return (await countsOf(client, [queue]))[0]?.dead ?? 0;
}

describe.each(['memory', 'redis'] as const)('Client and dead retry, over %s', (kind) => {
  const setup = async () => {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const node = (): Promise<void> => makeWorker({ broker, namespace, ledger, queues: ['default', 'later'] }).start();
    const first = makeWorker({ broker, namespace, ledger, queues: ['default', 'later'] });
    await first.start();
    const client = makeClient(broker, namespace);
    return { client, ledger, first, node, admin: client.broker as unknown as Broker };
  };

  it('a failure the client read while waiting for another job is not handed to a wait after the job was retried', async () => {
    const { client, first, node, admin } = await setup();
    // Fails its first run (to the dead set: no retries), succeeds its second.
    const flaky = await client.enqueue('flaky', ['k', 2], { retries: 0, queue: 'later' });
    // A wait on a job no node takes keeps the client reading its reply list: flaky's failure is read and parked.
    const keeping = waitFor(await client.enqueue('add', [1, 2], { queue: 'nobody' }));
    await waitUntil(() => client.parkedResults === 1, "the client read the job's failure");
    await first.stop();
    expect(await admin.retryDead('later', [flaky.id])).toBe(1);
    const waiting = waitFor(flaky);
    await node();
    // The new run's value, not the old run's failure.
    expect(await waiting).toBe(2);
    expect(client.parkedResults).toBe(0);
    await client.close();
    await expect(keeping).rejects.toMatchObject({ name: 'ClientClosedError' });
  });

  it('a parked failure of a job not retried is still handed over', async () => {
    const { client } = await setup();
    const failing = await client.enqueue('boom', [1], { retries: 0 });
    const keeping = waitFor(await client.enqueue('add', [1, 2], { queue: 'nobody' }));
    await waitUntil(() => client.parkedResults === 1, "the client read the job's failure");
    await expect(failing.result({ timeout: '30s' })).rejects.toMatchObject({ message: 'boom 1' });
    // A second wait reads the stored failure.
    await expect(failing.result({ timeout: '30s' })).rejects.toMatchObject({ message: 'boom 1' });
    await client.close();
    await expect(keeping).rejects.toMatchObject({ name: 'ClientClosedError' });
  });
});

describe('Client and dead retry, over redis: a reply list left over 1,000 announcements unread', () => {
  /**
   * 1,000 failures wait on the client's reply list (nobody waits), then two
   * jobs of queue `later` die and are retried: the retry does not scan a
   * list that long, so their failures' announcements stay: flaky's record
   * (inline), large's id (its failure is too large to ride inline), whose
   * stored failure the retry dropped. A marker's failure is announced last
   * (one child: in order). The node stops before the retry; `rerun` starts one.
   */
  const scene = async () => {
    const broker = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const first = makeWorker({ broker, namespace, ledger, concurrency: 1, queues: ['default', 'later'] });
    await first.start();
    const client = makeClient(broker, namespace);
    await client.enqueueMany(
      Array.from({ length: 1_000 }, (_, i) => ({ name: 'boom', args: [i], options: { retries: 0 } })),
    );
    await waitUntil(async () => (await deadIn(client, 'default')) === 1_000, 'the first jobs died');
    const flaky = await client.enqueue('flaky', ['k', 2], { retries: 0, queue: 'later' });
    const large = await client.enqueue('boom', ['x'.repeat(5_000)], { retries: 0, queue: 'later' });
    const marker = await client.enqueue('boom', ['m'], { retries: 0, queue: 'later' });
    await waitUntil(async () => (await deadIn(client, 'later')) === 3, 'the last jobs died');
    await first.stop();
    expect(await (client.broker as unknown as Broker).retryDead('later', [flaky.id, large.id])).toBe(2);
    const rerun = () => makeWorker({ broker, namespace, ledger, queues: ['later'] }).start();
    return { client, flaky, large, marker, rerun };
  };

  const newRuns = async (flakyWait: Promise<unknown>, largeWait: Promise<unknown>) => {
    expect(await flakyWait).toBe(2);
    const err = await largeWait.catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(ResultGoneError);
    expect(err).toMatchObject({ message: `boom ${'x'.repeat(5_000)}` });
  };

  it('waits begun after the client read its list wait for the new runs', async () => {
    const { client, flaky, large, marker, rerun } = await scene();
    const keeping = waitFor(await client.enqueue('add', [1, 2], { queue: 'nobody' }));
    // Once the marker's failure is handed over, every announcement before it was read.
    await expect(marker.result({ timeout: '30s' })).rejects.toMatchObject({ message: 'boom m' });
    const flakyWait = waitFor(flaky);
    const largeWait = waitFor(large);
    await rerun();
    await newRuns(flakyWait, largeWait);
    await client.close();
    await expect(keeping).rejects.toMatchObject({ name: 'ClientClosedError' });
  });

  it('waits begun before the client read its list wait for the new runs', async () => {
    const { flaky, large, marker, rerun } = await scene();
    const flakyWait = waitFor(flaky);
    const largeWait = waitFor(large);
    await expect(marker.result({ timeout: '30s' })).rejects.toMatchObject({ message: 'boom m' });
    await rerun();
    await newRuns(flakyWait, largeWait);
  });
});
