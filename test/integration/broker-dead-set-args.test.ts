/**
 * The dead-set calls reached from JavaScript with arguments the Broker
 * contract does not take: changeDead (and retryDead, purgeDead) with an
 * action or ids, listDead with a limit. Refused with an OptionError naming
 * what was wrong, on both brokers, and every dead job stays dead.
 */
import { describe, expect, it } from 'vitest';
import type { Broker, NewJob } from '../../dist/broker/types.js';
import { OptionError } from '../../dist/errors.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';
import { job as queueJob } from './redis-helpers.js';

/** A job of queue q under its own id. */
function job(id: string): NewJob {
  return queueJob('q', { id, task: 'work' });
}

describe.each(['memory', 'redis'] as const)('dead-set call arguments over %s', (kind) => {
  const { broker, node } = eachBrokerScope(kind, 'deadargs');

  /** Jobs `a`, `b` and `c` of queue q, dead. */
  async function threeDead(): Promise<Broker> {
    const b = await broker();
    const me = await node(b, 'n1');
    await b.enqueue([job('a'), job('b'), job('c')]);
    const { deliveries } = await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 3 }], count: 3, settle: [] });
    await b.settle(deliveries.map((delivery) => ({ kind: 'dead' as const, delivery, reason: 'bad' })));
    expect((await b.listDead('q', 10)).map((d) => d.job.id)).toEqual(['c', 'b', 'a']);
    return b;
  }

  const refused = (call: Promise<unknown>): Promise<unknown> =>
    call.then(
      () => undefined,
      (e: unknown) => e,
    );

  it.each([
    [
      'an action of another name',
      'requeue',
      ['a'],
      'action',
      /invalid option action: "requeue" \(expected retry, delete\)/,
    ],
    ['an action of another name, for all', 'Delete', undefined, 'action', /invalid option action: "Delete"/],
    ['ids given as one string', 'retry', 'abc', 'ids', /invalid option ids: "abc" \(expected an array of job ids/],
    ['an id that is a number', 'delete', ['a', 1], 'ids', /invalid option ids: 1 \(expected a job id/],
    ['an empty id', 'retry', [''], 'ids', /invalid option ids: "" \(expected a job id/],
  ])('%s: an OptionError naming it; every dead job stays dead', async (_, action, ids, option, message) => {
    const b = await threeDead();
    const err = await refused(b.changeDead('q', action as 'retry', ids as string[] | undefined));
    expect(err).toBeInstanceOf(OptionError);
    expect((err as OptionError).option).toBe(option);
    expect((err as Error).message).toMatch(message);
    expect((await b.listDead('q', 10)).map((d) => d.job.id)).toEqual(['c', 'b', 'a']);
    expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, dead: 3 });
  });

  it.each([Number.NaN, Infinity, 2.5, -1, '3'])(
    'listDead with a limit of %s: an OptionError naming it',
    async (limit) => {
      const b = await threeDead();
      const err = await refused(b.listDead('q', limit as number));
      expect(err).toBeInstanceOf(OptionError);
      expect((err as OptionError).option).toBe('limit');
      expect((err as Error).message).toMatch(/\(expected an integer >= 0\)$/);
      expect((await b.listDead('q', 0)).map((d) => d.job.id)).toEqual([]);
      expect((await b.listDead('q', 2)).map((d) => d.job.id)).toEqual(['c', 'b']);
    },
  );

  it('retryDead and purgeDead with ids as one string: refused, nothing moved', async () => {
    const b = await threeDead();
    expect(await refused(b.retryDead('q', 'a' as unknown as string[]))).toBeInstanceOf(OptionError);
    expect(await refused(b.purgeDead('q', 'b' as unknown as string[]))).toBeInstanceOf(OptionError);
    expect((await b.listDead('q', 10)).map((d) => d.job.id)).toEqual(['c', 'b', 'a']);
  });
});
