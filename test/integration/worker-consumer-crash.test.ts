/**
 * The Consumer's fetch loop crashes (here: the broker hands it a delivery it
 * cannot handle). Nothing would fetch any more, so the node must not carry on
 * heartbeating with its jobs held: it stops, gives every job back, leaves the
 * cluster and emits 'failed' (`prefork worker` then exits 1, as for a failed
 * pool).
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { BrokerRefusedError, ConsumerFailedError } from 'prefork';
import { createBroker, type Broker } from 'prefork/broker';
import {
  captureLog,
  cleanup,
  makeClient,
  makeWorker,
  newLedger,
  readLedger,
  silent,
  uniqueName,
} from '../helpers/worker.js';

afterEach(cleanup);

/** A real Redis broker whose first delivery batch starts with an entry that is not a delivery (no job). */
function withBrokenDelivery(broker: Broker): Broker {
  let broken = false;
  const spoil = <T extends { deliveries: readonly unknown[] }>(reply: T): T => {
    if (broken || reply.deliveries.length === 0) return reply;
    broken = true;
    return { ...reply, deliveries: [{ queue: 'default' }, ...reply.deliveries] };
  };
  return new Proxy(broker, {
    get(target, prop) {
      if (prop === 'fetch') return (...args: Parameters<Broker['fetch']>) => target.fetch(...args).then(spoil);
      if (prop === 'waitForWork')
        return (...args: Parameters<Broker['waitForWork']>) => target.waitForWork(...args).then(spoil);
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('Worker whose Consumer crashes', () => {
  it("stops, gives back the jobs it held, unregisters and emits 'failed' with ConsumerFailedError", async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const client = makeClient(url, namespace);
    const jobs = await client.enqueueMany(Array.from({ length: 3 }, () => ({ name: 'record' as const })));
    const real = createBroker(url, { namespace, logger: silent });
    try {
      const worker = makeWorker({ broker: withBrokenDelivery(real), ledger });
      const failed = new Promise<unknown>((resolve) => worker.once('failed', resolve));
      let stopped = false;
      worker.once('stopped', () => (stopped = true));
      await worker.start();
      const nodeId = worker.nodeId;

      const err = await failed;
      expect(err).toBeInstanceOf(ConsumerFailedError);
      expect(err).toMatchObject({ code: 'PREFORK_CONSUMER_FAILED' });
      expect((err as ConsumerFailedError).cause).toBeInstanceOf(TypeError);
      expect(worker.failed).toBe(err);
      expect(stopped).toBe(true);

      const admin = createBroker(url, { namespace, logger: silent });
      await admin.connect();
      try {
        // The batch was never handed to the pool: every job is back in its queue and this node is gone.
        expect((await admin.counts(['default']))[0]).toMatchObject({ waiting: 3, reserved: 0, dead: 0 });
        expect((await admin.listNodes()).map((n) => n.id)).not.toContain(nodeId);
      } finally {
        await admin.close();
      }
      expect(readLedger(ledger)).toHaveLength(0);
    } finally {
      await real.close();
    }
    // Another node runs them all.
    await makeWorker({ broker: url, namespace, ledger }).start();
    expect(await Promise.all(jobs.map((j) => j.result()))).toEqual(jobs.map((j) => j.id));
  });

  it('a queue key another program wrote over: the fetch is refused every time, so the node stops naming the key (not a node that says ready and fetches nothing)', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const raw = new Redis(url);
    try {
      await raw.set(`{${namespace}}:q:default`, 'garbage');
      const { log, lines } = captureLog();
      const worker = makeWorker({ broker: url, namespace, queues: 'default,other', logger: log });
      const failed = new Promise<unknown>((resolve) => worker.once('failed', resolve));
      await worker.start();
      const err = await failed;
      expect(err).toBeInstanceOf(ConsumerFailedError);
      expect((err as ConsumerFailedError).cause).toBeInstanceOf(BrokerRefusedError);
      expect((err as Error).message).toContain(`{${namespace}}:q:default is a string, not a stream`);
      // One line says so; no line carries a script's source.
      const said = lines.filter((l) => l.level === 50).map((l) => String(l.msg));
      expect(said).toEqual([expect.stringMatching(/refused .*WRONGTYPE.*q:default is a string, not a stream/)]);
      for (const line of lines) expect(JSON.stringify(line).length).toBeLessThan(8_000);
    } finally {
      raw.disconnect();
    }
  });
});
