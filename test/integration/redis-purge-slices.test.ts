/**
 * `purge` of a large queue on Redis: walked a slice per script, so Redis
 * serves others between the slices (one script over 200,000 jobs held it
 * for seconds), and still every waiting and delayed job goes, with its
 * index entry and unique lock, a reserved one stays with its node, and a
 * workflow's member fails its workflow.
 */
import { chain, task } from 'prefork';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { PURGE_SLICE } from '../../dist/broker/redis/queue-admin.js';
import type { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import { compileWorkflow } from '../../dist/workflow/compile.js';
import { WAIT } from '../helpers/wait.js';
import { fetchFrom, job, registerNode, Scope } from './redis-helpers.js';

let scope: Scope;
let broker: RedisBroker;

beforeEach(async () => {
  scope = new Scope();
  broker = await scope.broker();
  await registerNode(broker, 'n1', ['p']);
});
afterEach(async () => {
  await scope.cleanup();
});

/** How many scripts Redis received that name `key` while `call` ran (MONITOR: the calls, not the commands they ran). */
async function scriptsOn(key: string, call: () => Promise<unknown>): Promise<number> {
  const monitor = await scope.raw.duplicate().monitor();
  let calls = 0;
  let seen = false;
  const marker = `done-${Math.random()}`;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua' && /^eval/i.test(args[0] ?? '') && args.includes(key)) calls++;
    if (args[1] === marker) seen = true;
  });
  try {
    await call();
    await scope.raw.echo(marker);
    await vi.waitFor(() => expect(seen).toBe(true), WAIT);
  } finally {
    monitor.disconnect();
  }
  return calls;
}

it('drops a queue larger than a slice in several scripts: every waiting and delayed job, none reserved', async () => {
  const waiting = 2 * PURGE_SLICE + 500;
  const delayed = PURGE_SLICE + 200;
  const plain = Array.from({ length: waiting }, (_, i) => job('p', { id: `w-${i}` }));
  await broker.enqueue(plain.slice(0, 3));
  // Reserved before the purge: stays with its node. Given back: waits in the queue's :rd, and goes.
  const [held, givenBack] = (await fetchFrom(broker, 'n1', ['p'], 2)).deliveries;
  await broker.settle([{ kind: 'giveBack', delivery: givenBack! }]);
  // Delayed first: the timer marker their enqueue leaves in the stream is then among the entries counts() scans.
  await broker.enqueue(Array.from({ length: delayed }, (_, i) => job('p', { id: `d-${i}`, delay: 3_600_000 })));
  await broker.enqueue(plain.slice(3));
  await broker.enqueue([job('p', { id: 'u-1', uniqueKey: 'only-one' })]);
  const flow = compileWorkflow(chain(task('step'), task('next')), 'wf-1', (sig) =>
    job('p', { id: `m-${sig.name}`, task: sig.name }),
  );
  await broker.enqueue([], [flow]);
  expect((await broker.counts(['p']))[0]).toMatchObject({ waiting: waiting - 1 + 2, reserved: 1, delayed });

  let dropped = 0;
  const scripts = await scriptsOn(scope.key('q:p'), async () => {
    dropped = await broker.purge('p');
  });
  expect(dropped).toBe(waiting - 1 + 2 + delayed);
  expect(scripts).toBeGreaterThan(3);
  expect((await broker.counts(['p']))[0]).toEqual({ queue: 'p', waiting: 0, reserved: 1, delayed: 0, dead: 0 });
  // Out of the index (the reserved one stays), the unique lock free, the workflow failed by its member.
  expect(await scope.raw.hkeys(scope.key('jobs'))).toEqual([held!.job.id]);
  expect(await broker.locate('w-5')).toBeUndefined();
  expect(await broker.enqueue([job('p', { id: 'u-2', uniqueKey: 'only-one' })])).toEqual([undefined]);
  expect(await broker.getWorkflow('wf-1')).toMatchObject({ state: 'FAILURE' });
});
