/**
 * A revoke of many jobs on Redis that Redis refuses for one of them (its
 * result's key holds another type: another program wrote it). The jobs are
 * revoked together (chunks of ids, round trips shared), so the others are
 * revoked all the same and the nodes are told of them before the refusal is
 * thrown; the refused one is left where it was, not taken out of its queue
 * without a result.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, expect, inject, it } from 'vitest';
import '../setup/provided.js';
import { createBroker } from '../../dist/broker/index.js';
import type { Broker, NewJob } from '../../dist/broker/types.js';
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

it('one job refused: the others are revoked and the nodes told, the refused one stays in its queue', async () => {
  const url = inject('redisUrl');
  const namespace = `rvr${randomUUID().slice(0, 8)}`;
  const b: Broker = createBroker(url, { namespace, logger: silent });
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
  await b.enqueue([job('held')]);
  const { deliveries } = await b.fetch({ nodeId: 'n1', plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
  expect(deliveries.map((d) => d.job.id)).toEqual(['held']);
  await b.enqueue([job('a'), job('bad'), job('c')]);
  await raw.lpush(`${namespace}:res:bad`, 'not a result');

  await expect(b.revoke(['a', 'held', 'bad', 'c'], { terminate: false, grace: 5_000 })).rejects.toThrow(/WRONGTYPE/);
  for (const id of ['a', 'held', 'c']) expect(await b.getResult(id), id).toMatchObject({ state: 'REVOKED' });
  // 'bad' was not taken out: it waits, as before the call.
  expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 1, reserved: 1 });
  expect((await b.listRevoked()).map((r) => r.id).sort()).toEqual(['a', 'c', 'held']);
  const [request] = await b.takeControl('n1');
  expect((request?.args ?? []).slice(3)).toEqual(['a', 'held', 'c']);
});

it('a look refused in a later chunk: the jobs of the chunks before are remembered and the nodes told', async () => {
  const url = inject('redisUrl');
  const namespace = `rvr${randomUUID().slice(0, 8)}`;
  const b: Broker = createBroker(url, { namespace, logger: silent });
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
  await b.enqueue([job('held')]);
  const { deliveries } = await b.fetch({ nodeId: 'n1', plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
  expect(deliveries.map((d) => d.job.id)).toEqual(['held']);
  // Past the first chunk of ids (500): an id the job index places in a delayed set that holds another type.
  const fillers = Array.from({ length: 500 }, (_, i) => `none-${i}`);
  await raw.hset(`{${namespace}}:jobs`, 'bad', `d:${Date.now()}:other`);
  await raw.set(`{${namespace}}:delayed:other`, 'not a sorted set');

  await expect(b.revoke(['held', ...fillers, 'bad'], { terminate: false, grace: 5_000 })).rejects.toThrow(/WRONGTYPE/);
  expect(await b.getResult('held')).toMatchObject({ state: 'REVOKED' });
  // Its node holds it: told of the revoke, it does not run it.
  expect((await b.listRevoked()).map((r) => r.id)).toEqual(['held']);
  const [request] = await b.takeControl('n1');
  expect((request?.args ?? []).slice(3)).toEqual(['held']);
});
