/**
 * Keys of prefork's namespace that another program (or an old version)
 * wrote with other contents than prefork's, read by the admin calls on
 * Redis: each refusal names the key and what is wrong with it, and the
 * jobs, results and nodes around it are read as before.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, expect, inject, it } from 'vitest';
import '../setup/provided.js';
import { createBroker } from '../../dist/broker/index.js';
import type { Broker, NewJob } from '../../dist/broker/types.js';
import { BrokerRefusedError } from '../../dist/errors.js';
import { silent } from '../helpers/worker.js';

const open: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

function job(id: string): NewJob {
  return {
    id,
    task: 'work',
    queue: 'q',
    payload: new Uint8Array([0x91, 0x01]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: Date.now(),
  };
}

async function scope(prefix: string): Promise<{ b: Broker; raw: Redis; namespace: string }> {
  const url = inject('redisUrl');
  const namespace = `${prefix}${randomUUID().slice(0, 8)}`;
  const b = createBroker(url, { namespace, logger: silent });
  open.push(b);
  await b.connect();
  const raw = new Redis(url);
  open.push({ close: () => raw.quit() });
  await b.register({
    id: 'n1',
    name: 'n1@test',
    host: 'test',
    pid: process.pid,
    queues: ['q'],
    concurrency: '1',
    startedAt: Date.now(),
  });
  return { b, raw, namespace };
}

it('a leader lease key of another type: leader() is refused naming the key; nodes and jobs read as before', async () => {
  const { b, raw, namespace } = await scope('fkl');
  await raw.rpush(`{${namespace}}:leader`, 'foreign');
  const err = await b.leader().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BrokerRefusedError);
  expect((err as Error).message).toMatch(
    new RegExp(
      `^Redis refused the read of the leader lease: WRONGTYPE .*\\(\\{${namespace}\\}:leader is not a hash\\)$`,
    ),
  );
  expect((await b.listNodes()).map((n) => n.id)).toEqual(['n1']);
  await b.enqueue([job('a')]);
  const got = await b.fetch({ nodeId: 'n1', plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
  expect(got.deliveries.map((d) => d.job.id)).toEqual(['a']);
});
