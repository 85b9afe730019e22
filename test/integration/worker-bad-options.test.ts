/**
 * A job record whose own options the pool refuses (written by another
 * producer, bypassing the Client's checks): every attempt would fail the same
 * way before reaching a child, so the Worker dead-letters it at once with a
 * FAILURE naming the option, and carries on with the next job.
 */
import { randomUUID } from 'node:crypto';
import { pack } from 'msgpackr';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Worker } from 'prefork';
import { createBroker } from 'prefork/broker';
import type { NewJob } from '../../dist/broker/types.js';
import { cleanup, makeClient, makeWorker, newLedger, readLedger, silent, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

function record(options: NewJob['options']): NewJob {
  return {
    id: randomUUID(),
    task: 'record',
    queue: 'default',
    payload: pack([0]),
    attempt: 0,
    redeliveries: 0,
    options,
    enqueuedAt: Date.now(),
  };
}

/**
 * Enqueues `bad` then `next` (whose last job succeeds), runs a Worker until
 * that job succeeded, and checks every bad job is a FAILURE naming `option`
 * and dead; `check` gets the ids the children ran, in order, and the worker.
 */
async function refusedThenNext(
  option: string,
  bad: NewJob[],
  next: NewJob[],
  check: (ran: string[], worker: Worker) => void,
): Promise<void> {
  const url = inject('redisUrl');
  const namespace = uniqueName('ns');
  const ledger = newLedger();
  const broker = createBroker(url, { namespace, logger: silent });
  await broker.connect();
  try {
    await broker.enqueue([...bad, ...next]);
    const worker = makeWorker({ broker: url, namespace, ledger, concurrency: 1, prefetchMultiplier: 1 });
    await worker.start();
    const client = makeClient(url, namespace);
    const last = next[next.length - 1] as NewJob;
    await expect
      .poll(async () => (await client.getResult(last.id))?.state, { message: 'the next job ran' })
      .toBe('SUCCESS');
    for (const job of bad) {
      const failure = await client.getResult(job.id);
      expect(failure?.state).toBe('FAILURE');
      expect(failure?.error?.message).toMatch(new RegExp(`invalid option ${option}`));
    }
    expect((await broker.listDead('default', 10)).map((d) => d.job.id).sort()).toEqual(bad.map((j) => j.id).sort());
    check(
      readLedger(ledger).map((r) => r.id),
      worker,
    );
  } finally {
    await broker.close();
  }
}

describe('Worker: a job record with options the pool refuses', () => {
  it('a timeLimit past 2^31-1 ms: dead after one attempt (no retries), FAILURE naming timeLimit; the next job runs', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const broker = createBroker(url, { namespace, logger: silent });
    await broker.connect();
    try {
      // Retries left, so only the dead-lettering keeps it from coming back with backoff.
      const bad = record({ timeLimit: 2 ** 31, retries: 3 });
      const good = record({});
      await broker.enqueue([bad, good]);
      const worker = makeWorker({ broker: url, namespace, ledger, concurrency: 1, prefetchMultiplier: 1 });
      await worker.start();
      const client = makeClient(url, namespace);

      await expect
        .poll(async () => (await client.getResult(good.id))?.state, { message: 'the next job ran' })
        .toBe('SUCCESS');
      const failure = await client.getResult(bad.id);
      expect(failure?.state).toBe('FAILURE');
      expect(failure?.error?.message).toMatch(/timeLimit/);
      const dead = await broker.listDead('default', 10);
      expect(dead.map((d) => d.job.id)).toEqual([bad.id]);
      expect(dead[0]!.reason).toMatch(/timeLimit/);
      expect((await broker.counts(['default']))[0]).toMatchObject({ waiting: 0, delayed: 0, reserved: 0, dead: 1 });
      expect(worker.stats().consumer).toMatchObject({ fetched: 2, succeeded: 1, dead: 1, retried: 0 });
      // It never reached a child.
      expect(readLedger(ledger).map((r) => r.id)).toEqual([good.id]);
    } finally {
      await broker.close();
    }
  });

  it("a resultTtl that is not whole ms up to 100 years: dead at once, FAILURE naming resultTtl (kept the worker's TTL)", async () => {
    const bad = [record({ resultTtl: 1e20 }), record({ resultTtl: '1d' as unknown as number, retries: 3 })];
    // Without results written, its resultTtl does not matter: it runs.
    const unused = record({ resultTtl: -1, ignoreResult: true });
    const good = record({});
    await refusedThenNext('resultTtl', bad, [unused, good], (ran) => expect(ran).toEqual([unused.id, good.id]));
  });

  it('a rateLimit that is not a rate: dead at once, FAILURE naming rateLimit, no turn taken; the next job runs', async () => {
    const bad = [record({ rateLimit: 'fast', retries: 3 }), record({ rateLimit: '0/s' })];
    const good = record({});
    await refusedThenNext('rateLimit', bad, [good], (ran, worker) => {
      expect(worker.stats().consumer).toMatchObject({ fetched: 3, succeeded: 1, dead: 2, retried: 0, deferred: 0 });
      expect(ran).toEqual([good.id]);
    });
  });
});
