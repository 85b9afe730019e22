/**
 * Workflows over both brokers, with real worker children: chains pass results
 * on, groups keep member order, chords call back exactly once, failures stop
 * what follows and name the member, callbacks fire once, and bad input is
 * refused before anything is enqueued.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import {
  chain,
  chord,
  Client,
  group,
  OptionError,
  ResultTimeoutError,
  RevokedError,
  task,
  WorkflowError,
  WorkflowHandle,
  type SignatureOptions,
  type WorkerOptions,
  type Chain,
} from 'prefork';
import { createBroker } from '../../dist/broker/index.js';
import { MIN_LEASE_MS } from '../../dist/broker/broker-options.js';
import { decodeBody } from '../../dist/protocol/codec.js';
import type { Broker, FetchReply } from '../../dist/broker/types.js';
import {
  brokerFor,
  cleanup,
  countsOf,
  makeClient,
  makeWorker,
  newLedger,
  silent,
  uniqueName,
} from '../helpers/worker.js';

afterEach(cleanup);

/** The ledger lines `note` wrote with `tag`: the arguments of each run, in order. */
function notes(ledger: string, tag: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(ledger, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${tag} `))
    .map((line) => JSON.parse(line.slice(tag.length + 1, line.lastIndexOf(' '))) as unknown);
}

describe.each(['memory', 'redis'] as const)('Workflows over %s', (kind) => {
  async function setup(
    options: Partial<WorkerOptions> = {},
  ): Promise<{ client: Client; ledger: string; namespace: string; broker: string }> {
    const broker = brokerFor(kind, inject('redisUrl'));
    const namespace = uniqueName('wf');
    const ledger = newLedger();
    await makeWorker({ broker, namespace, ledger, ...options }).start();
    return { client: makeClient(broker, namespace), ledger, namespace, broker };
  }

  it('a chain passes each result on as the first argument, through three steps', async () => {
    const { client } = await setup();
    const handle = await client.enqueue(chain(task('add', [1, 2]), task('add', [10]), task('double')));
    expect(await handle.result({ timeout: 30_000 })).toBe(26);
    const view = await handle.state();
    expect(view?.state).toBe('SUCCESS');
    expect(view?.tree.children?.map((c) => [c.task, c.state, c.value])).toEqual([
      ['add', 'SUCCESS', 3],
      ['add', 'SUCCESS', 13],
      ['double', 'SUCCESS', 26],
    ]);
  });

  it('a chain built a step at a time stays flat: runs as written, however many steps', async () => {
    const { client } = await setup();
    const short = await client.enqueue(chain(chain(task('add', [1, 2]), task('add', [10])), task('double')));
    expect(await short.result({ timeout: 30_000 })).toBe(26);
    expect((await short.state())?.tree.children?.map((c) => c.task)).toEqual(['add', 'add', 'double']);
    // Each step nested in a new chain would be 5,000 levels deep: past the stack of whoever walks it.
    // Its first step waits in a queue no node takes from: this one is only enqueued and read.
    const long = Array.from({ length: 4_998 }, () => task('add', [0])).reduce(
      (steps: Chain, step) => chain(steps, step),
      chain(task('add', [1, 1], { queue: 'parked' }), task('add', [0])),
    );
    const handle = await client.enqueue(long);
    const steps = (await handle.state())?.tree.children;
    expect(steps).toHaveLength(5_000);
    expect(steps?.slice(0, 2).map((c) => c.state)).toEqual(['PENDING', 'WAITING']);
  });

  it('a step taken out while it waits for a retry fails its chain with why, not the attempt before', async () => {
    const { client } = await setup();
    const handle = await client.enqueue(
      chain(task('boom', [1], { retries: 1, backoff: { type: 'fixed', delay: '1h' } }), task('double')),
    );
    await vi.waitFor(async () => expect((await handle.state())?.tree.children?.[0]?.state).toBe('RETRY'), {
      timeout: 20_000,
      interval: 50,
    });
    // Its stored result is the failed attempt's RETRY, which said nothing of how the step ended.
    expect(await (client.broker as Broker).purge('default')).toBe(1);
    await expect(handle.result({ timeout: 30_000 })).rejects.toMatchObject({
      name: 'JobWithdrawnError',
      code: 'PREFORK_JOB_WITHDRAWN',
    });
  });

  it('an immutable step ignores the result before it', async () => {
    const { client } = await setup();
    const handle = await client.enqueue(chain(task('add', [1, 2]), task('echo', ['mine'], { immutable: true })));
    expect(await handle.result({ timeout: 30_000 })).toBe('mine');
  });

  it('a group resolves with its members results in member order', async () => {
    const { client } = await setup();
    // The first members take longest: they end last, their results stay first.
    const handle = await client.enqueue(
      group([task('record', [300]), task('record', [150]), task('add', [1, 1]), task('echo', ['x'])]),
    );
    const values = (await handle.result({ timeout: 30_000 })) as unknown[];
    const view = await handle.state();
    const ids = view?.tree.children?.map((c) => c.id);
    expect(values).toEqual([ids?.[0], ids?.[1], 2, 'x']);
  });

  it('a chain step that fails stops the chain: the handle rejects with its error, the rest never run', async () => {
    const { client, ledger } = await setup();
    const handle = await client.enqueue(chain(task('add', [1, 2]), task('boom'), task('note', ['after'])));
    const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ message: 'boom 3', code: 'E_BOOM' });
    const view = await handle.state();
    expect(view?.state).toBe('FAILURE');
    expect(view?.tree.children?.map((c) => c.state)).toEqual(['SUCCESS', 'FAILURE', 'SKIPPED']);
    expect(notes(ledger, 'after')).toEqual([]);
  });

  it('a chord whose member fails never calls back; the handle names the member, with every member state', async () => {
    const { client, ledger } = await setup();
    const handle = await client.enqueue(
      chord([task('add', [1, 1]), task('boom', [7]), task('add', [2, 2])], task('note', ['callback'])),
    );
    const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowError);
    const failure = err as WorkflowError;
    const view = await handle.state();
    const members = view?.tree.children?.[0]?.children ?? [];
    expect(failure.member).toMatchObject({ id: members[1]?.id, task: 'boom', error: { message: 'boom 7' } });
    expect(failure.message).toContain(`member boom (job ${members[1]?.id})`);
    expect(failure.members.map((m) => [m.task, m.state, m.value])).toEqual([
      ['add', 'SUCCESS', 2],
      ['boom', 'FAILURE', undefined],
      ['add', 'SUCCESS', 4],
    ]);
    expect(view?.tree.children?.[1]?.state).toBe('SKIPPED');
    expect(notes(ledger, 'callback')).toEqual([]);
  });

  it('nested, as people write it: chain(group, step, group) is a chord, then a group given its result', async () => {
    const { client } = await setup();
    const handle = await client.enqueue(
      chain(
        group([task('add', [1, 1]), chain(task('add', [1, 2]), task('double'))]),
        task('sum'),
        group([
          task('double'),
          task('add', [1]),
          chord([task('echo', ['a'], { immutable: true }), task('echo', ['b'], { immutable: true })], task('echo')),
        ]),
      ),
    );
    // group -> [2, 6]; sum -> 8; each member of the last group is given 8 (the chord's members are immutable).
    expect(await handle.result({ timeout: 30_000 })).toEqual([16, 9, ['a', 'b']]);
  });

  it('onSuccess and onError callbacks run once, with the result or the failure', async () => {
    const { client, ledger } = await setup();
    const ok = await client.enqueue('add', [1, 2], { onSuccess: task('note', ['ok']), onError: task('note', ['no']) });
    expect(await ok.result({ timeout: 30_000 })).toBe(3);
    const bad = await client.enqueue('boom', [5], { onSuccess: task('note', ['no']), onError: task('note', ['err']) });
    await expect(bad.result({ timeout: 30_000 })).rejects.toThrow('boom 5');
    await expect.poll(() => notes(ledger, 'ok').length + notes(ledger, 'err').length, { timeout: 30_000 }).toBe(2);
    expect(notes(ledger, 'ok')).toEqual([[3]]);
    expect(notes(ledger, 'err')).toEqual([
      [{ id: bad.id, name: 'boom', error: { name: 'Error', message: 'boom 5', code: 'E_BOOM' } }],
    ]);
    // A step's own callbacks, inside a chain.
    const flow = await client.enqueue(
      chain(task('add', [2, 2], { onSuccess: task('note', ['step']) }), task('double')),
    );
    expect(await flow.result({ timeout: 30_000 })).toBe(8);
    await expect.poll(() => notes(ledger, 'step'), { timeout: 30_000 }).toEqual([[4]]);
    expect(notes(ledger, 'no')).toEqual([]);
  });

  it('enqueueMany with callbacks hands a duplicate the handle of the job it duplicates', async () => {
    const { client, ledger } = await setup();
    // Held (it waits in a queue no node serves): a job with the same arguments duplicates it.
    const held = await client.enqueue('add', [1, 2], { unique: true, queue: 'unserved' });
    const [dup, withCallback, plain] = await client.enqueueMany([
      { name: 'add', args: [1, 2], options: { unique: true, queue: 'unserved' } },
      { name: 'add', args: [2, 3], options: { onSuccess: task('note', ['ok']) } },
      { name: 'add', args: [3, 4] },
    ]);
    expect(dup).toMatchObject({ id: held.id, duplicate: true });
    expect(withCallback?.duplicate).toBe(false);
    expect(await withCallback?.result({ timeout: 30_000 })).toBe(5);
    expect(await plain?.result({ timeout: 30_000 })).toBe(7);
    await expect.poll(() => notes(ledger, 'ok'), { timeout: 30_000 }).toEqual([[5]]);
    const counts = await countsOf(client, ['unserved']);
    expect(counts[0]).toMatchObject({ waiting: 1 });
  });

  it("a workflow's end reaches a waiter that was never told of it (its announcement lost)", async () => {
    const { client, broker, namespace } = await setup();
    const other = makeClient(broker, namespace);
    // Still running when the wait starts (the first step takes a while).
    const flow = await client.enqueue(chain(task('record', [1000]), task('echo', ['done'], { immutable: true })));
    // `other` did not enqueue it: nothing is announced to it; it finds the end by reading the workflow.
    expect(await new WorkflowHandle(flow.id, other).result({ timeout: 30_000 })).toBe('done');
  });

  it('one of two waits on a workflow timing out leaves the other waiting, and told of its end', async () => {
    const { client, broker, namespace } = await setup();
    const other = makeClient(broker, namespace);
    const flow = await client.enqueue(chain(task('record', [1500]), task('echo', ['done'], { immutable: true })));
    // Nothing is announced to `other`: its waits find the end by re-reading the workflow.
    const handle = new WorkflowHandle(flow.id, other);
    const long = handle.result({ timeout: 30_000 });
    await expect(handle.result({ timeout: 100 })).rejects.toThrow(ResultTimeoutError);
    expect(await long).toBe('done');
  });

  it('a chord of 10,000 members calls back once with every result', async () => {
    const { client, ledger } = await setup();
    const n = 10_000;
    const handle = await client.enqueue(
      chord(
        Array.from({ length: n }, (_, i) => task('add', [i, 0])),
        chain(task('sum'), task('note', ['total'])),
      ),
    );
    expect(await handle.result({ timeout: 120_000 })).toEqual([(n * (n - 1)) / 2]);
    expect(notes(ledger, 'total')).toEqual([[(n * (n - 1)) / 2]]);
  }, 180_000);

  it('members revoked while they wait fail the chord: the handle names the first, the callback never runs', async () => {
    const { client, ledger } = await setup();
    // Member two waits in a queue no node serves, member three is delayed: neither is ever settled by a node.
    const handle = await client.enqueue(
      chord(
        [task('add', [1, 1]), task('add', [2, 2], { queue: 'unserved' }), task('add', [3, 3], { delay: '1h' })],
        task('note', ['callback']),
      ),
    );
    const members = (await handle.state())?.tree.children?.[0]?.children ?? [];
    const [, waiting, delayed] = members.map((m) => m.id as string);
    expect(await client.revokeMany([waiting as string, delayed as string])).toEqual([
      { id: waiting, outcome: 'revoked', removed: true, workflow: handle.id },
      { id: delayed, outcome: 'revoked', removed: true, workflow: handle.id },
    ]);
    const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowError);
    const failure = err as WorkflowError;
    expect(failure.member).toMatchObject({
      id: waiting,
      task: 'add',
      error: { name: 'RevokedError', message: `job ${waiting} was revoked`, code: 'PREFORK_REVOKED' },
    });
    // Each member's state agrees with its own job's.
    expect(failure.members.map((m) => m.state)).toEqual(['SUCCESS', 'REVOKED', 'REVOKED']);
    expect((await handle.state())?.tree.children?.[0]?.children?.map((m) => [m.state, m.error?.name])).toEqual([
      ['SUCCESS', undefined],
      ['REVOKED', 'RevokedError'],
      ['REVOKED', 'RevokedError'],
    ]);
    expect((await client.getState(waiting as string))?.state).toBe('REVOKED');
    expect((await handle.state())?.tree.children?.[1]?.state).toBe('SKIPPED');
    expect(notes(ledger, 'callback')).toEqual([]);
  });

  it("a step that throws another job's RevokedError: its node's state is its own job's", async () => {
    const { client } = await setup();
    const handle = await client.enqueue(group([task('rethrowRevoked', ['other']), task('add', [1, 1])]));
    const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowError);
    const member = (await handle.state())?.tree.children?.[0];
    const own = (await client.getState(member?.id as string))?.state;
    expect(own).toMatch(/^(FAILURE|REVOKED)$/);
    expect([member?.state, member?.error?.name]).toEqual([own, 'RevokedError']);
    expect((err as WorkflowError).members.map((m) => m.state)).toEqual([own, 'SUCCESS']);
  });

  it('the onError callback of a job revoked while it waits runs once, with the RevokedError', async () => {
    const { client, ledger } = await setup();
    const job = await client.enqueue('add', [1, 2], { queue: 'unserved', onError: task('note', ['err']) });
    expect(await job.revoke()).toMatchObject({ outcome: 'revoked', removed: true });
    await expect(job.result({ timeout: 30_000 })).rejects.toThrow(RevokedError);
    await expect.poll(() => notes(ledger, 'err'), { timeout: 30_000 }).toHaveLength(1);
    expect(notes(ledger, 'err')).toEqual([
      [
        {
          id: job.id,
          name: 'add',
          error: { name: 'RevokedError', message: `job ${job.id} was revoked`, code: 'PREFORK_REVOKED' },
        },
      ],
    ]);
  });

  it('a running member revoked with terminate fails the chord through its node, naming it', async () => {
    // Started (not only received): a revoke that races the child's start notice is the pool's matter.
    const { client, ledger } = await setup({ trackStarted: true });
    const handle = await client.enqueue(
      chord([task('waitForAbort', [60_000]), task('add', [1, 1])], task('note', ['callback'])),
    );
    const id = (await handle.state())?.tree.children?.[0]?.children?.[0]?.id as string;
    await expect.poll(async () => (await client.getState(id))?.state, { timeout: 20_000 }).toBe('STARTED');
    expect(await client.revoke(id, { terminate: true, grace: 100 })).toMatchObject({ outcome: 'revoked' });
    const err = await handle.result({ timeout: 20_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowError);
    expect((err as WorkflowError).member).toMatchObject({ id, error: { name: 'RevokedError' } });
    expect(notes(ledger, 'callback')).toEqual([]);
  });

  it('a workflow revoked by its id: a waiting step fails in it, the steps not started never run', async () => {
    const { client, ledger } = await setup();
    // Step one waits in a queue no node serves; two and three are in no queue yet.
    const handle = await client.enqueue(
      chain(task('add', [1, 1], { queue: 'unserved' }), task('note', ['second']), task('note', ['third'])),
    );
    const [first, second, third] = ((await handle.state())?.tree.children ?? []).map((s) => s.id as string);
    expect(await handle.revoke()).toEqual({ id: handle.id, outcome: 'revoked', workflow: handle.id, members: 3 });
    const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RevokedError);
    expect((err as RevokedError).message).toBe(`job ${first} was revoked`);
    for (const id of [first, second, third]) expect((await client.getState(id as string))?.state, id).toBe('REVOKED');
    expect(await client.getResult(third as string)).toMatchObject({ task: 'note', queue: 'default' });
    expect(await countsOf(client, ['unserved'])).toMatchObject([{ waiting: 0 }]);
    // Ended: a second revoke changes nothing.
    expect(await handle.revoke()).toEqual({ id: handle.id, outcome: 'finished', state: 'FAILURE' });
    expect(notes(ledger, 'second')).toEqual([]);
  });

  it('a workflow revoked while a step runs: that step ends, the next one is skipped when it comes, none after', async () => {
    const { client, ledger } = await setup({ trackStarted: true });
    const handle = await client.enqueue(
      chain(
        task('waitForFile', ['go']),
        // Its onError would run when it fails revoked: revoked with the workflow, it is skipped in turn.
        task('note', ['second'], { onError: task('note', ['failed']) }),
        task('note', ['third']),
      ),
    );
    const [first, second, third] = ((await handle.state())?.tree.children ?? []).map((s) => s.id as string);
    await expect.poll(async () => (await client.getState(first as string))?.state, { timeout: 20_000 }).toBe('STARTED');
    // The two steps after the running one and the second one's onError callback: the running one runs on.
    expect(await handle.revoke()).toMatchObject({ outcome: 'revoked', members: 3 });
    // Revoked already: a second revoke revokes nothing more.
    expect(await handle.revoke()).toEqual({ id: handle.id, outcome: 'revoked', workflow: handle.id, members: 0 });
    writeFileSync(`${ledger}.go`, '');
    const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RevokedError);
    expect((err as RevokedError).message).toBe(`job ${second} was revoked`);
    expect(await client.getResult(first as string)).toMatchObject({ state: 'SUCCESS', value: 'go' });
    expect((await client.getState(third as string))?.state).toBe('REVOKED');
    expect(notes(ledger, 'second')).toEqual([]);
    expect(notes(ledger, 'third')).toEqual([]);
    expect(notes(ledger, 'failed')).toEqual([]);
  });

  it('a step not enqueued yet, revoked by its own id, never runs: the chain fails with its RevokedError', async () => {
    const { client, ledger } = await setup({ trackStarted: true });
    const handle = await client.enqueue(
      chain(task('waitForFile', ['go']), task('note', ['second']), task('note', ['third'])),
    );
    const [first, second, third] = ((await handle.state())?.tree.children ?? []).map((s) => s.id as string);
    await expect.poll(async () => (await client.getState(first as string))?.state, { timeout: 20_000 }).toBe('STARTED');
    expect(await client.revoke(second as string)).toEqual({
      id: second,
      outcome: 'revoked',
      workflow: handle.id,
      unstarted: true,
    });
    // Its REVOKED result is stored at once; a second revoke says so.
    expect((await client.getState(second as string))?.state).toBe('REVOKED');
    expect(await client.revoke(second as string)).toMatchObject({ outcome: 'revoked', state: 'REVOKED' });
    writeFileSync(`${ledger}.go`, '');
    const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RevokedError);
    expect((err as RevokedError).message).toBe(`job ${second} was revoked`);
    expect(await client.getResult(first as string)).toMatchObject({ state: 'SUCCESS', value: 'go' });
    expect((await client.getState(second as string))?.state).toBe('REVOKED');
    expect((await handle.state())?.tree.children?.map((c) => c.state)).toEqual(['SUCCESS', 'REVOKED', 'SKIPPED']);
    expect(notes(ledger, 'second')).toEqual([]);
    expect(notes(ledger, 'third')).toEqual([]);
    // The third step was skipped: it never runs, there is nothing to revoke.
    expect(await client.revoke(third as string)).toEqual({ id: third, outcome: 'finished', workflow: handle.id });
  });

  it("a chord's callback revoked by its own id never runs; the members run, the chord fails with its error", async () => {
    const { client, ledger } = await setup({ trackStarted: true });
    const handle = await client.enqueue(
      chord([task('waitForFile', ['go']), task('add', [1, 1])], task('note', ['callback'])),
    );
    const tree = (await handle.state())?.tree;
    const callback = tree?.children?.[1]?.id as string;
    const blocker = tree?.children?.[0]?.children?.[0]?.id as string;
    await expect.poll(async () => (await client.getState(blocker))?.state, { timeout: 20_000 }).toBe('STARTED');
    const named = [`${handle.id}.99`, `${handle.id}.0`, `${handle.id}.01`, '__proto__.0', 'constructor.1'];
    expect(await client.revokeMany([callback, ...named])).toEqual([
      { id: callback, outcome: 'revoked', workflow: handle.id, unstarted: true },
      // No such node, the root is a chord (no job), not its spelling, no workflow: no job's id.
      ...named.map((id) => ({ id, outcome: 'unknown' })),
    ]);
    writeFileSync(`${ledger}.go`, '');
    const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RevokedError);
    expect((err as RevokedError).message).toBe(`job ${callback} was revoked`);
    expect((await handle.state())?.tree.children?.[0]?.state).toBe('SUCCESS');
    expect((await client.getState(callback))?.state).toBe('REVOKED');
    expect(notes(ledger, 'callback')).toEqual([]);
  });

  it('a workflow that ended is revoked by its id while its onError callback runs: that callback and its own stop', async () => {
    const { client, ledger } = await setup({ trackStarted: true });
    // The step fails, which ends the workflow; its onError runs on after that, then would start its onSuccess.
    const handle = await client.enqueue(
      chain(
        task('boom', [1], {
          onError: task('waitForAbort', [60_000], { immutable: true, onSuccess: task('note', ['after']) }),
        }),
        task('note', ['second']),
      ),
    );
    await expect(handle.result({ timeout: 30_000 })).rejects.toThrow('boom 1');
    const step = (await handle.state())?.tree.children?.[0];
    const [onError, after] = [step?.onError?.id as string, step?.onError?.onSuccess?.id as string];
    await expect.poll(async () => (await client.getState(onError))?.state, { timeout: 20_000 }).toBe('STARTED');
    // The callback and its onSuccess; not the second step, which the failure skipped.
    expect(await handle.revoke({ terminate: true, grace: 100 })).toEqual({
      id: handle.id,
      outcome: 'revoked',
      workflow: handle.id,
      members: 2,
    });
    // Stopped by its node, it ended in the workflow (its REVOKED result is stored at once, before that).
    await expect
      .poll(async () => (await handle.state())?.tree.children?.[0]?.onError?.error?.name, { timeout: 20_000 })
      .toBe('RevokedError');
    expect((await client.getState(onError))?.state).toBe('REVOKED');
    expect((await client.getState(after))?.state).toBe('REVOKED');
    expect((await handle.state())?.tree.children?.[1]?.state).toBe('SKIPPED');
    expect(await handle.revoke()).toEqual({ id: handle.id, outcome: 'finished', state: 'FAILURE' });
    expect(notes(ledger, 'after')).toEqual([]);
    expect(notes(ledger, 'second')).toEqual([]);
  });

  it('a signature refuses an unknown option as enqueue does, a __proto__ key from JSON included', async () => {
    const { client } = await setup();
    const fromJson = (): SignatureOptions => JSON.parse('{"__proto__": {"queue": "elsewhere"}}') as SignatureOptions;
    const unknown = /unknown option "__proto__"/;
    await expect(client.enqueue('add', [1, 2], fromJson())).rejects.toThrow(unknown);
    await expect(client.enqueue(task('add', [1, 2], fromJson()))).rejects.toThrow(unknown);
    await expect(client.enqueue(chain(task('add', [1, 2]), task('double', [], fromJson())))).rejects.toThrow(
      /chain step 2.*unknown option "__proto__"/,
    );
    await expect(client.enqueue(task('add', [1, 2], { colour: 'red' } as SignatureOptions))).rejects.toThrow(
      /unknown option "colour"/,
    );
    const counts = await countsOf(client, ['default', 'elsewhere']);
    expect(counts.map((c) => c.waiting + c.delayed)).toEqual([0, 0]);
  });

  it('bad input throws OptionError naming the place, and nothing is enqueued', async () => {
    const { client } = await setup();
    expect(() => group([])).toThrow(OptionError);
    expect(() => group([])).toThrow(/group members/);
    // @ts-expect-error -- a chord needs a callback
    expect(() => chord([task('add', [1, 1])])).toThrow(/chord callback/);
    // @ts-expect-error -- not a signature
    expect(() => chain(task('add', [1, 1]), 'double')).toThrow(/chain step 2/);
    // @ts-expect-error -- not a signature
    expect(() => group([task('add'), { name: 'add' }])).toThrow(/group members\[1\]/);
    await expect(
      client.enqueue(chain(task('add', [1, 2]), group([task('add', [1]), task('add', [1], { retries: -1 })]))),
    ).rejects.toThrow(/chain step 2 > group member 2.*retries/);
    await expect(client.enqueue(chain(task('add', [1, 2]), task('add', [1], { unique: true })))).rejects.toThrow(
      /chain step 2.*unique/,
    );
    await expect(client.enqueue('add', [1, 2], { onSuccess: 'double' as never })).rejects.toThrow(/onSuccess/);
    const counts = await countsOf(client, ['default']);
    expect(counts[0]).toMatchObject({ waiting: 0, reserved: 0, delayed: 0 });
    // An unknown task is allowed (it may live on another node): it fails when run.
    const unknown = await client.enqueue(chain(task('add', [1, 2]), task('nowhere')));
    await expect(unknown.result({ timeout: 30_000 })).rejects.toThrow(/nowhere/);
  });
});

describe.each(['memory', 'redis'] as const)('A workflow member settled twice, over %s', (kind) => {
  it('counts once and starts the callback once (a late settle of a job recovered and run again)', async () => {
    const url = brokerFor(kind, inject('redisUrl'));
    const b = createBroker(url, { namespace: uniqueName('wf'), leaseMs: MIN_LEASE_MS, logger: silent });
    await b.connect();
    const client = new Client({ broker: b, logger: silent });
    try {
      await settledTwice(b, client);
    } finally {
      await client.close();
      await b.close();
    }
  });
});

describe.each(['memory', 'redis'] as const)('A workflow member that leaves without a node, over %s', (kind) => {
  async function withBroker(run: (b: Broker, client: Client) => Promise<void>): Promise<void> {
    const url = brokerFor(kind, inject('redisUrl'));
    const b = createBroker(url, { namespace: uniqueName('wf'), leaseMs: MIN_LEASE_MS, logger: silent });
    await b.connect();
    const client = new Client({ broker: b, logger: silent });
    try {
      await run(b, client);
    } finally {
      await client.close();
      await b.close();
    }
  }

  it('buried by a recovery, fails its chain with a WorkerLostError, runs its onError once, stays dead', async () => {
    await withBroker(buriedByRecovery);
  });

  it('buried with another member of its workflow by one recovery: the recovery goes through, each fails once', async () => {
    await withBroker(buriedTogether);
  });

  it('taken out of its queue (removeWaiting), fails its chain with a JobWithdrawnError', async () => {
    await withBroker(async (b, client) => {
      const handle = await client.enqueue(chain(task('add', [1, 1]), task('double')));
      const id = (await handle.state())?.tree.children?.[0]?.id as string;
      expect(await b.removeWaiting(id)).toMatchObject({ id, state: 'waiting' });
      await expect(handle.result({ timeout: 30_000 })).rejects.toMatchObject({
        name: 'JobWithdrawnError',
        message: `job ${id} was taken out of its queue before it started`,
      });
      expect((await handle.state())?.tree.children?.map((c) => c.state)).toEqual(['FAILURE', 'SKIPPED']);
    });
  });

  it('purged with its queue, waiting or delayed, fails its workflow; the callbacks that starts survive', async () => {
    await withBroker(purged);
  });

  it('purged with members of more workflows than a Lua unpack takes (8,000): each fails in its own', async () => {
    await withBroker(async (b, client) => {
      const n = 8_500;
      // Each job with a callback is a workflow of its own; its onError lands elsewhere.
      await client.enqueueMany(
        Array.from({ length: n }, (_, i) => ({
          name: 'add',
          args: [i, 1],
          options: { onError: task('note', ['gone'], { queue: 'other' }) },
        })),
      );
      expect(await b.purge('default')).toBe(n);
      expect((await b.counts(['other']))[0]).toMatchObject({ waiting: n });
    });
  });
});

/** Nodes A and B, on queue default, through `b`. */
async function nodesAB(b: Broker): Promise<void> {
  for (const id of ['A', 'B'])
    await b.register({
      id,
      name: id,
      host: 'test',
      pid: process.pid,
      queues: ['default'],
      concurrency: '1',
      startedAt: 0,
    });
}

/** Node A presumed dead: B (alive) recovers it once it may (`maxRedeliveries`), taking `n` jobs. */
async function recoverAByB(b: Broker, maxRedeliveries: number, n: number): Promise<void> {
  await vi.waitFor(
    async () => {
      await b.heartbeat('B', ['default']);
      expect(await b.recover('A', 'B', maxRedeliveries)).toBe(n);
    },
    { timeout: 10_000, interval: 100 },
  );
}

async function purged(b: Broker, client: Client): Promise<void> {
  const withdrawn = { name: 'JobWithdrawnError', code: 'PREFORK_JOB_WITHDRAWN' };
  const flow = await client.enqueue(
    chord(
      [task('add', [1, 1]), task('add', [2, 2], { delay: '1h', onError: task('note', ['gone'], { queue: 'other' }) })],
      task('sum'),
    ),
  );
  // Its step's onError lands in the queue being purged: it was not waiting when the purge began.
  const steps = await client.enqueue(chain(task('add', [1, 1], { onError: task('note', ['stays']) }), task('double')));
  await client.enqueue('add', [5, 5]);
  expect(await b.purge('default')).toBe(4);
  const err = await flow.result({ timeout: 10_000 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowError);
  expect((err as WorkflowError).member.error).toMatchObject(withdrawn);
  expect((await flow.state())?.tree.children?.map((c) => c.state)).toEqual(['FAILURE', 'SKIPPED']);
  await expect(steps.result({ timeout: 10_000 })).rejects.toMatchObject(withdrawn);
  const counts = await b.counts(['default', 'other']);
  expect(counts.map((c) => [c.waiting, c.delayed])).toEqual([
    [1, 0],
    [1, 0],
  ]);
}

async function buriedByRecovery(b: Broker, client: Client): Promise<void> {
  const handle = await client.enqueue(
    chain(task('add', [1, 1], { onError: task('note', ['poison']) }), task('double')),
  );
  await nodesAB(b);
  const plan = [{ queue: 'default', quota: 10 }];
  const first = await b.fetch({ nodeId: 'A', plan, count: 10, settle: [] });
  expect(first.deliveries.map((d) => d.job.task)).toEqual(['add']);
  const member = first.deliveries[0]?.job.id;
  // Node A is presumed dead, and the job has had its deliveries (maxRedeliveries 0): it is buried.
  await recoverAByB(b, 0, 1);
  const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
  expect(err).toMatchObject({
    name: 'WorkerLostError',
    message: 'delivered 1 times without an outcome (its node died each time)',
  });
  const view = await handle.state();
  expect(view?.failure).toMatchObject({ id: member, name: 'add', error: { code: 'PREFORK_WORKER_LOST' } });
  expect(view?.tree.children?.map((c) => c.state)).toEqual(['FAILURE', 'SKIPPED']);
  // The member's onError callback was enqueued once, given the failure; the next step never was.
  await b.heartbeat('B', ['default']);
  const next = await b.fetch({ nodeId: 'B', plan, count: 10, settle: [] });
  expect(next.deliveries.map((d) => d.job.task)).toEqual(['note']);
  expect(decodeBody((next.deliveries[0] as (typeof next.deliveries)[0]).job.payload)).toEqual([
    view?.failure,
    'poison',
  ]);
  // It stays dead: its workflow recorded its failure, a rerun would belong to nothing.
  expect(await b.retryDead('default', [member as string])).toBe(0);
  expect(await b.retryDead('default', undefined)).toBe(0);
  expect((await b.counts(['default']))[0]).toMatchObject({ dead: 1 });
}

async function buriedTogether(b: Broker, client: Client): Promise<void> {
  const handle = await client.enqueue(
    chord([task('add', [1, 1]), task('add', [2, 2]), task('add', [3, 3])], task('note', ['callback'])),
  );
  // A job of no workflow, held by the same node: its recovery must not wait on the workflow's.
  const plain = await client.enqueue('add', [4, 4]);
  await nodesAB(b);
  const plan = [{ queue: 'default', quota: 10 }];
  const first = await b.fetch({ nodeId: 'A', plan, count: 10, settle: [] });
  expect(first.deliveries.map((d) => d.job.task)).toEqual(['add', 'add', 'add', 'add']);
  // Node A is presumed dead with all four: the three members, out of deliveries, are buried in one batch.
  await recoverAByB(b, 0, 4);
  const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowError);
  const members = (await handle.state())?.tree.children?.[0]?.children ?? [];
  expect((err as WorkflowError).member).toMatchObject({ id: members[0]?.id, error: { name: 'WorkerLostError' } });
  expect(members.map((m) => [m.state, m.error?.code])).toEqual([
    ['FAILURE', 'PREFORK_WORKER_LOST'],
    ['FAILURE', 'PREFORK_WORKER_LOST'],
    ['FAILURE', 'PREFORK_WORKER_LOST'],
  ]);
  expect((await handle.state())?.tree.children?.[1]?.state).toBe('SKIPPED');
  await expect(plain.result({ timeout: 30_000 })).rejects.toMatchObject({ name: 'WorkerLostError' });
  // Nothing else was started: the callback never was.
  await b.heartbeat('B', ['default']);
  expect((await b.fetch({ nodeId: 'B', plan, count: 10, settle: [] })).deliveries).toEqual([]);
  expect((await b.counts(['default']))[0]).toMatchObject({ waiting: 0, dead: 4 });
}

async function settledTwice(b: Broker, client: Client): Promise<void> {
  const handle = await client.enqueue(chord([task('add', [1, 1]), task('add', [2, 2])], task('sum')));
  await nodesAB(b);
  const first = await b.fetch({ nodeId: 'A', plan: [{ queue: 'default', quota: 10 }], count: 10, settle: [] });
  const fetchB = async (): Promise<FetchReply> => {
    await b.heartbeat('B', ['default']);
    return b.fetch({ nodeId: 'B', plan: [{ queue: 'default', quota: 10 }], count: 10, settle: [] });
  };
  expect(first.deliveries.map((d) => d.job.task)).toEqual(['add', 'add']);
  const [one, two] = first.deliveries as [(typeof first.deliveries)[0], (typeof first.deliveries)[0]];
  // Node A is presumed dead: its jobs go back to the queue; node B runs member one again.
  await recoverAByB(b, 5, 2);
  const again = await fetchB();
  const oneAgain = again.deliveries.find((d) => d.job.id === one.job.id);
  const twoAgain = again.deliveries.find((d) => d.job.id === two.job.id);
  expect(oneAgain && twoAgain).toBeTruthy();
  const ack = (delivery: typeof one, value: number) =>
    ({ kind: 'ack', delivery, outcome: { ok: true, value } }) as const;
  // A's late settlement of member one, then B's of the same member, then member two.
  await b.settle([ack(one, 2)]);
  await b.settle([ack(oneAgain as typeof one, 2)]);
  // Member two has not ended: the callback must not have started.
  expect((await fetchB()).deliveries).toEqual([]);
  await b.settle([ack(twoAgain as typeof one, 4)]);
  const cb = await fetchB();
  expect(cb.deliveries.map((d) => d.job.task)).toEqual(['sum']);
  expect(decodeBody((cb.deliveries[0] as typeof one).job.payload)).toEqual([[2, 4]]);
  // A's late settlement of member two after all: nothing more is started.
  await b.settle([ack(two, 4)]);
  const none = await fetchB();
  expect(none.deliveries).toEqual([]);
  await b.settle([ack(cb.deliveries[0] as typeof one, 6)]);
  expect(await handle.result({ timeout: 30_000 })).toBe(6);
}
