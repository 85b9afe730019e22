/**
 * A schedule entry's state in Redis that does not read (another program
 * wrote its key: a latest tick that is not a number, a key of another type)
 * counts as a lost state: the node stores the entry again and its ticks
 * fire, and the node's other entries, claimed and stored in the same calls,
 * fire on. Before, one such entry stopped every entry of every node running
 * it, for good.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineSchedule } from 'prefork';
import type { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import { cleanup, makeWorker } from '../helpers/worker.js';
import { Scope } from './redis-helpers.js';

afterEach(cleanup);

const scopes: Scope[] = [];
afterEach(async () => {
  await Promise.all(scopes.splice(0).map((s) => s.cleanup()));
});

/** Entries whose jobs wait in a queue no node reads: each entry's state names the last job it enqueued. */
const schedule = defineSchedule({
  damaged: { task: 'add', args: [1, 2], every: '1s', options: { queue: 'nobody' } },
  fine: { task: 'add', args: [3, 4], every: '1s', options: { queue: 'nobody' } },
});

/** The entries stored as a node stores them, then `damage` applied to the entry "damaged". */
async function storedThenDamaged(damage: (scope: Scope, key: string) => Promise<unknown>) {
  const scope = new Scope();
  scopes.push(scope);
  const broker = await scope.broker();
  await broker.publishSchedule(
    [...schedule.entries.values()].map((e) => ({ name: e.name, definition: e.definition, hash: e.hash })),
  );
  await damage(scope, scope.key('sched:damaged'));
  return { scope, broker };
}

/** Resolves once every entry has enqueued a job, with a state that reads. */
async function everyEntryFires(broker: RedisBroker): Promise<void> {
  await expect
    .poll(
      async () =>
        (await broker.listSchedule())
          .filter((s) => s.lastJobId !== undefined && Number.isSafeInteger(s.last))
          .map((s) => s.name),
      { timeout: 30_000 },
    )
    .toEqual(['damaged', 'fine']);
}

describe('a schedule entry whose state in Redis does not read', () => {
  it('a latest tick that is not a number: the entry is stored again, and both entries fire', async () => {
    const { scope, broker } = await storedThenDamaged((s, key) => s.raw.hset(key, 'last', 'not a time'));
    await makeWorker({ broker: scope.url, namespace: scope.ns, concurrency: 1, schedule }).start();
    await everyEntryFires(broker);
  });

  it('a key of another type: the entry is stored again in its place, and both entries fire', async () => {
    const { scope, broker } = await storedThenDamaged(async (s, key) => {
      await s.raw.del(key);
      await s.raw.set(key, 'written by another program');
    });
    await makeWorker({ broker: scope.url, namespace: scope.ns, concurrency: 1, schedule }).start();
    await everyEntryFires(broker);
    expect(await scope.raw.type(scope.key('sched:damaged'))).toBe('hash');
  });

  it('damaged while the node runs: the next claim stores it again, and both entries fire on', async () => {
    const { scope, broker } = await storedThenDamaged(() => Promise.resolve());
    await makeWorker({ broker: scope.url, namespace: scope.ns, concurrency: 1, schedule }).start();
    await everyEntryFires(broker);
    const before = new Map((await broker.listSchedule()).map((s) => [s.name, s.last]));
    await scope.raw.hset(scope.key('sched:damaged'), 'last', 'not a time');
    await expect
      .poll(
        async () =>
          (await broker.listSchedule())
            .filter((s) => Number.isSafeInteger(s.last) && s.last > (before.get(s.name) ?? Infinity))
            .map((s) => s.name),
        { timeout: 30_000 },
      )
      .toEqual(['damaged', 'fine']);
  });
});
