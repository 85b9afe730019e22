/**
 * Keys of prefork's namespace that another program (or an old version)
 * wrote with other contents than prefork's, read by the admin calls on
 * Redis: each refusal names the key and what is wrong with it, and the
 * jobs, results and nodes around it are read as before.
 */
import { pack } from 'msgpackr';
import { expect, it } from 'vitest';
import type { Broker } from '../../dist/broker/types.js';
import { BrokerRefusedError } from '../../dist/errors.js';
import { job, nodeScopes } from './redis-helpers.js';

const scope = nodeScopes();

it('a leader lease key of another type: leader() is refused naming the key; nodes and jobs read as before', async () => {
  const { b, raw, namespace } = await scope();
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
  await b.enqueue([job('q', { id: 'a' })]);
  const got = await b.fetch({ nodeId: 'n1', plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
  expect(got.deliveries.map((d) => d.job.id)).toEqual(['a']);
});

it.each([
  ['bytes that do not decode', Buffer.from('foreign'), /does not decode: /],
  [
    'a record cut short',
    pack({ id: 'bad', task: 'work', queue: 'q', state: 'SUCCESS' }).subarray(0, 12),
    /does not decode: /,
  ],
  ['a number', pack(53), /is a number, not a result record$/],
  ['a map without a job state', pack({ id: 'bad', state: 'DONE' }), /has no job state \(state: "DONE"\)$/],
])(
  'a result key holding %s: its reads are refused naming the key; the other results read as before',
  async (_, bytes, why) => {
    const { b, raw, namespace } = await scope();
    const good = pack({ id: 'good', task: 'work', queue: 'q', state: 'SUCCESS', retries: 0, result: 1 });
    await raw.set(`${namespace}:res:good`, good);
    await raw.set(`${namespace}:res:bad`, bytes);
    const refused = (call: Promise<unknown>): Promise<unknown> =>
      call.then(
        () => undefined,
        (e: unknown) => e,
      );
    for (const call of [
      b.getResult('bad'),
      b.getResults(['good', 'bad']),
      b.revoke(['bad'], { terminate: false, grace: 0 }),
    ]) {
      const err = await refused(call);
      expect(err).toBeInstanceOf(BrokerRefusedError);
      expect((err as Error).message).toMatch(new RegExp(`^the result stored at ${namespace}:res:bad `));
      expect((err as Error).message).toMatch(why);
    }
    expect(await b.getResult('good')).toMatchObject({ id: 'good', state: 'SUCCESS', result: 1 });
    expect(await raw.getBuffer(`${namespace}:res:bad`)).toEqual(bytes);
  },
);

/** An admin call, the key it reads under `{ns}:` and the type prefork keeps there. */
const ADMIN_CALLS: [string, string, string, (b: Broker) => Promise<unknown>][] = [
  ['knownQueues', 'queues', 'set', (b) => b.knownQueues()],
  ['listPaused', 'paused', 'set', (b) => b.listPaused()],
  ['pauseQueue', 'paused', 'set', (b) => b.pauseQueue('q')],
  ['rateLimits', 'rate-limits', 'hash', (b) => b.rateLimits()],
  ['setRateLimit', 'rate-limits', 'hash', (b) => b.setRateLimit('work', '1/s')],
  ['listSchedule', 'schedules', 'set', (b) => b.listSchedule()],
  ['recentEvents', 'events', 'stream', (b) => b.recentEvents(10)],
  ['getWorkflow', 'wf:w1', 'hash', (b) => b.getWorkflow('w1')],
  ['listRevoked', 'revoked', 'zset', (b) => b.listRevoked()],
  ['listNodes', 'nodes', 'zset', (b) => b.listNodes()],
  ['counts', 'q:q', 'stream', (b) => b.counts(['q'])],
  ['listJobs waiting', 'q:q', 'stream', (b) => b.listJobs('q', 'waiting', 10)],
  ['listJobs delayed', 'delayed:q', 'zset', (b) => b.listJobs('q', 'delayed', 10)],
  ['purge', 'delayed:q', 'zset', (b) => b.purge('q')],
  ['listDead', 'dead:q', 'stream', (b) => b.listDead('q', 10)],
  ['retryDead all', 'dead:q', 'stream', (b) => b.retryDead('q', undefined)],
  ['retryDead by id', 'dead:q', 'stream', (b) => b.retryDead('q', ['a'])],
  ['purgeDead all', 'dead:q', 'stream', (b) => b.purgeDead('q')],
];

it.each(ADMIN_CALLS)(
  '%s, with a string at {ns}:%s: refused naming the key and what it holds; the key is left as it was',
  async (_, suffix, type, call) => {
    const { b, raw, namespace } = await scope();
    const key = `{${namespace}}:${suffix}`;
    await raw.set(key, 'foreign');
    const err = await call(b).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BrokerRefusedError);
    expect((err as Error).message).toMatch(/^Redis refused the .*: WRONGTYPE /);
    expect((err as Error).message.endsWith(`(${key} is a string, not a ${type})`)).toBe(true);
    expect(await raw.get(key)).toBe('foreign');
  },
);

it('a schedule entry of another type: listSchedule lists it as damaged, not left out as if dropped', async () => {
  const { b, raw, namespace } = await scope();
  await raw.sadd(`{${namespace}}:schedules`, 'nightly');
  await raw.set(`{${namespace}}:sched:nightly`, 'foreign');
  expect(await b.listSchedule()).toEqual([
    { name: 'nightly', hash: '', last: 0, definition: '', damaged: 'its key holds another type than a hash' },
  ]);
  // The key is another program's until a node that runs the entry stores it again.
  expect(await raw.get(`{${namespace}}:sched:nightly`)).toBe('foreign');
});
