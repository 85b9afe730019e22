/**
 * A job record whose own options the Client would refuse, or whose workflow
 * place is malformed (written by another producer, bypassing the Client's
 * checks): it cannot be run as asked, so the Worker dead-letters it at once,
 * unrun, with a MalformedJobError naming the field, and carries on with the
 * next job.
 */
import { randomUUID } from 'node:crypto';
import { pack } from 'msgpackr';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Worker } from 'prefork';
import { createBroker } from 'prefork/broker';
import type { NewJob } from '../../dist/broker/types.js';
import { cleanup, makeClient, makeWorker, newLedger, readLedger, silent, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

function record(options: NewJob['options'], extra: Partial<NewJob> = {}): NewJob {
  return {
    id: randomUUID(),
    task: 'record',
    queue: 'default',
    payload: pack([0]),
    attempt: 0,
    redeliveries: 0,
    options,
    enqueuedAt: Date.now(),
    ...extra,
  };
}

/**
 * Enqueues `bad` then `next` (whose last job succeeds), runs a Worker until
 * that job succeeded, and checks every bad job is dead and a FAILURE, a
 * MalformedJobError whose message matches `named` (or its own, given one per
 * bad job); `check` gets the ids the children ran, in order, and the worker.
 */
async function refusedThenNext(
  named: RegExp | readonly RegExp[],
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
    for (const [i, job] of bad.entries()) {
      const failure = await client.getResult(job.id);
      expect(failure?.state, JSON.stringify(job.options)).toBe('FAILURE');
      expect(failure?.error?.name).toBe('MalformedJobError');
      expect(failure?.error?.message).toMatch(named instanceof RegExp ? named : (named[i] as RegExp));
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

describe('Worker: a job record with options the Client would refuse', () => {
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
      expect(failure?.error?.name).toBe('MalformedJobError');
      expect(failure?.error?.message).toMatch(/invalid option timeLimit/);
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

  it("a resultTtl that is not whole ms up to 100 years, even one no result would use: dead at once, FAILURE naming resultTtl (kept the worker's TTL)", async () => {
    const bad = [
      record({ resultTtl: 1e20 }),
      record({ resultTtl: '1d' as unknown as number, retries: 3 }),
      // The Client refuses it whatever ignoreResult says: so does the Worker.
      record({ resultTtl: -1, ignoreResult: true }),
    ];
    const good = record({});
    await refusedThenNext(/invalid option resultTtl/, bad, [good], (ran) => expect(ran).toEqual([good.id]));
  });

  it('a rateLimit that is not a rate: dead at once, FAILURE naming rateLimit, no turn taken; the next job runs', async () => {
    const bad = [record({ rateLimit: 'fast', retries: 3 }), record({ rateLimit: '0/s' })];
    const good = record({});
    await refusedThenNext(/invalid option rateLimit/, bad, [good], (ran, worker) => {
      expect(worker.stats().consumer).toMatchObject({ fetched: 3, succeeded: 1, dead: 2, retried: 0, deferred: 0 });
      expect(ran).toEqual([good.id]);
    });
  });
  it('retries that are not an integer >= 0 ("x", -1, 1e300): dead at once, unrun, FAILURE naming retries', async () => {
    const bad = ['x', -1, 1e300].map((retries) => record({ retries: retries as number }));
    const good = record({});
    await refusedThenNext(/invalid option retries/, bad, [good], (ran, worker) => {
      expect(ran).toEqual([good.id]);
      expect(worker.stats().consumer).toMatchObject({ succeeded: 1, dead: 3, retried: 0 });
    });
  });

  it("an ignoreResult, backoff or options object of the wrong type: dead at once, unrun, FAILURE naming it; an unknown key (a newer producer's) is ignored", async () => {
    const cases: [NewJob, RegExp][] = [
      [record({ ignoreResult: 'yes' as unknown as boolean }), /invalid option ignoreResult: "yes"/],
      [record({ retries: 1, backoff: null as never }), /invalid option backoff: null/],
      [record({ retries: 1, backoff: { delay: '1s' as unknown as number } }), /invalid option backoff.delay: "1s"/],
      [record([1, 2] as never), /invalid option options: \[1,2\]/],
    ];
    const newer = record({ priority: 'high' } as never);
    const good = record({});
    await refusedThenNext(
      cases.map(([, named]) => named),
      cases.map(([job]) => job),
      [newer, good],
      (ran) => expect(ran).toEqual([newer.id, good.id]),
    );
  });

  it('a workflow place that is malformed (node -1, no queues): dead at once, unrun, FAILURE naming it; its settlement lands', async () => {
    const bad = record({}, { workflow: { id: 'no-such-workflow', node: -1, queues: [] } });
    const good = record({});
    await refusedThenNext(/workflow reference has a node -1/, [bad], [good], (ran, worker) => {
      expect(ran).toEqual([good.id]);
      expect(worker.stats().consumer).toMatchObject({ succeeded: 1, dead: 1 });
    });
  });
});
