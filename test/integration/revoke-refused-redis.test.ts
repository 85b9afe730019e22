/**
 * A revoke of many jobs on Redis that Redis refuses for one of them (its
 * result's key holds another type: another program wrote it). The jobs are
 * revoked together (chunks of ids, round trips shared), so the others are
 * revoked all the same and the nodes are told of them before the refusal is
 * thrown; the refused one is left where it was, not taken out of its queue
 * without a result.
 */
import { expect, it } from 'vitest';
import { job, nodeScopes } from './redis-helpers.js';

const setup = nodeScopes();

/** A job of queue q under its own id (the ids here are read back as they are). */
function jobIn(id: string): ReturnType<typeof job> {
  return job('q', { id, task: 'work' });
}

it('one job refused: the others are revoked and the nodes told, the refused one stays in its queue', async () => {
  const { b, raw, namespace } = await setup();
  await b.enqueue([jobIn('held')]);
  const { deliveries } = await b.fetch({ nodeId: 'n1', plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
  expect(deliveries.map((d) => d.job.id)).toEqual(['held']);
  await b.enqueue([jobIn('a'), jobIn('bad'), jobIn('c')]);
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
  const { b, raw, namespace } = await setup();
  await b.enqueue([jobIn('held')]);
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
