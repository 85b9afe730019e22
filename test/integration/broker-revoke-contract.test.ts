/**
 * The revoke part of the Broker contract, over both implementations: what a
 * revoke finds and changes (the REVOKED result, the job taken out of its
 * queue or delayed set when no node holds it), the remembered ids, and the
 * control request every live node is sent.
 */
import { describe, expect, it } from 'vitest';
import { chain, task } from 'prefork';
import type { Broker, Delivery, NewJob } from '../../dist/broker/types.js';
import { compileWorkflow } from '../../dist/workflow/compile.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';

const GRACE = { terminate: false, grace: 5_000 };

function job(id: string, extra: Partial<NewJob> = {}): NewJob {
  return {
    id,
    task: 'work',
    queue: 'q',
    payload: new Uint8Array([0x91, 0x01]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: Date.now(),
    ...extra,
  };
}

async function fetchAll(b: Broker, nodeId: string, count = 10): Promise<Delivery[]> {
  return (await b.fetch({ nodeId, plan: [{ queue: 'q', quota: count }], count, settle: [] })).deliveries;
}

describe.each(['memory', 'redis'] as const)('revoke over %s', (kind) => {
  const { broker, node } = eachBrokerScope(kind, 'revoke');

  it('a waiting job is taken out of its queue, its result is REVOKED at once, and its id is remembered', async () => {
    const b = await broker();
    const n = await node(b, 'n1');
    await b.enqueue([job('a'), job('b')]);
    const [outcome] = await b.revoke(['a'], GRACE);
    expect(outcome).toEqual({ id: 'a', outcome: 'revoked', removed: true });
    const record = await b.getResult('a');
    expect(record).toMatchObject({ id: 'a', task: 'work', queue: 'q', state: 'REVOKED' });
    // The error's wire form alone: no stack (one per job, of prefork's own frames, was most of each result).
    expect(record?.error).toEqual({
      name: 'RevokedError',
      message: 'job a was revoked',
      props: { code: 'PREFORK_REVOKED', jobId: 'a' },
    });
    expect((await fetchAll(b, n)).map((d) => d.job.id)).toEqual(['b']);
    const remembered = await b.listRevoked();
    expect(remembered.map((r) => r.id)).toEqual(['a']);
    expect(remembered[0]?.expiresAt).toBe((remembered[0]?.revokedAt ?? 0) + 86_400_000);
  });

  it('a delayed job is taken out of the delayed set', async () => {
    const b = await broker();
    const n = await node(b, 'n1');
    await b.enqueue([job('later', { delay: 60_000 })]);
    expect(await b.revoke(['later'], GRACE)).toEqual([{ id: 'later', outcome: 'revoked', removed: true }]);
    expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, delayed: 0 });
    expect(await fetchAll(b, n)).toEqual([]);
  });

  it('a job a node holds stays with it, and every live node is sent the revoke', async () => {
    const b = await broker();
    const n1 = await node(b, 'n1');
    const n2 = await node(b, 'n2');
    await b.enqueue([job('held')]);
    expect((await fetchAll(b, n1)).map((d) => d.job.id)).toEqual(['held']);
    expect(await b.revoke(['held'], { terminate: true, grace: 250 })).toEqual([{ id: 'held', outcome: 'revoked' }]);
    expect((await b.counts(['q']))[0]).toMatchObject({ reserved: 1 });
    for (const id of [n1, n2]) {
      const requests = await b.takeControl(id);
      expect(requests).toHaveLength(1);
      const [terminate, grace, expiresAt, ...ids] = requests[0]?.args ?? [];
      expect(requests[0]?.command).toBe('revoke');
      expect({ terminate, grace, ids }).toEqual({ terminate: 1, grace: 250, ids: ['held'] });
      expect(expiresAt).toBeGreaterThan(Date.now());
    }
  });

  it('a finished job is left as it was; an unknown id is said to be unknown and not remembered', async () => {
    const b = await broker();
    const n = await node(b, 'n1');
    await b.enqueue([job('done', { replyTo: 'c1' })]);
    const [d] = await fetchAll(b, n);
    await b.settle([
      {
        kind: 'ack',
        delivery: d as Delivery,
        result: { id: 'done', task: 'work', queue: 'q', state: 'SUCCESS', value: 3, retries: 0 },
      },
    ]);
    expect(await b.revoke(['done', 'nope'], GRACE)).toEqual([
      { id: 'done', outcome: 'finished', state: 'SUCCESS' },
      { id: 'nope', outcome: 'unknown' },
    ]);
    expect(await b.getResult('done')).toMatchObject({ state: 'SUCCESS', value: 3 });
    expect(await b.getResult('nope')).toBeUndefined();
    expect(await b.listRevoked()).toEqual([]);
    expect(await b.takeControl(n)).toEqual([]);
  });

  it("an id that is both a job's (its own id) and a workflow's revokes the job, as no workflow's member", async () => {
    const b = await broker();
    await node(b, 'n1');
    const flow = compileWorkflow(chain(task('s1'), task('s2')), 'both', (sig, _where, id) =>
      job(id ?? sig.name, { task: sig.name }),
    );
    await b.enqueue([job('both', { ownId: true })], [flow]);
    expect(await b.revoke(['both'], GRACE)).toEqual([{ id: 'both', outcome: 'revoked', removed: true }]);
    expect(await b.getResult('both')).toMatchObject({ id: 'both', state: 'REVOKED' });
    expect((await b.getWorkflow('both'))?.state).toBe('PENDING');
    expect((await b.listRevoked()).map((r) => r.id)).toEqual(['both']);
    expect((await b.listJobs('q', 'waiting', 10)).jobs.map((j) => j.job.id)).toEqual(['both.1']);
  });

  it("a step not enqueued yet named before a waiting job of its workflow: the job's revoke fails the workflow first", async () => {
    const b = await broker();
    await node(b, 'n1');
    const flow = compileWorkflow(chain(task('s1'), task('s2')), 'wf', (sig, _where, id) =>
      job(id ?? sig.name, { task: sig.name }),
    );
    await b.enqueue([], [flow]);
    expect(await b.revoke(['wf.2', 'wf.1'], GRACE)).toEqual([
      { id: 'wf.2', outcome: 'finished', workflow: 'wf' },
      { id: 'wf.1', outcome: 'revoked', removed: true, workflow: 'wf' },
    ]);
    expect((await b.getWorkflow('wf'))?.state).toBe('FAILURE');
    expect((await b.listRevoked()).map((r) => r.id)).toEqual(['wf.1']);
  });

  it('the client waiting for a job taken out of its queue is told at once', async () => {
    const b = await broker();
    await b.enqueue([job('w', { replyTo: 'client-1' })]);
    await b.revoke(['w'], GRACE);
    const got = await b.waitForResults('client-1', 5_000);
    expect(got.records.map((r) => [r.id, r.state])).toEqual([['w', 'REVOKED']]);
  });

  it('many ids in one call, past a chunk of the batched path: each gets the outcome it would alone, in order', async () => {
    const b = await broker();
    const n = await node(b, 'n1');
    // 1,100 ids (Redis revokes them in chunks of 500): waiting, delayed, held by a node, finished, unknown.
    const ids = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    const held = ids('held', 40);
    await b.enqueue(held.map((id) => job(id)));
    const fetched = await fetchAll(b, n, held.length);
    expect(fetched).toHaveLength(held.length);
    const done = ids('done', 30);
    await b.enqueue(done.map((id) => job(id)));
    await b.settle(
      (await fetchAll(b, n, done.length)).map((d) => ({
        kind: 'ack' as const,
        delivery: d,
        result: { id: d.job.id, task: 'work', queue: 'q', state: 'SUCCESS' as const, value: 1, retries: 0 },
      })),
    );
    const waiting = ids('wait', 700);
    const delayed = ids('later', 300);
    await b.enqueue([...waiting.map((id) => job(id)), ...delayed.map((id) => job(id, { delay: 60_000 }))]);
    const unknown = ids('nope', 30);
    const all = [...waiting.slice(0, 400), ...held, ...unknown, ...done, ...delayed, ...waiting.slice(400)];
    const expected = new Map<string, object>([
      ...[...waiting, ...delayed].map((id): [string, object] => [id, { id, outcome: 'revoked', removed: true }]),
      ...held.map((id): [string, object] => [id, { id, outcome: 'revoked' }]),
      ...done.map((id): [string, object] => [id, { id, outcome: 'finished', state: 'SUCCESS' }]),
      ...unknown.map((id): [string, object] => [id, { id, outcome: 'unknown' }]),
    ]);
    // A repeated id is revoked once, at its first place.
    expect(await b.revoke([...all, waiting[0] as string], GRACE)).toEqual(all.map((id) => expected.get(id)));
    expect((await b.counts(['q']))[0]).toMatchObject({ waiting: 0, delayed: 0, reserved: held.length });
    for (const id of [waiting[699], delayed[0], held[39]])
      expect(await b.getResult(id as string), id).toMatchObject({ state: 'REVOKED' });
    expect(await b.getResult('done0')).toMatchObject({ state: 'SUCCESS' });
    expect((await b.listRevoked()).map((r) => r.id).sort()).toEqual([...waiting, ...delayed, ...held].sort());
    const [request] = await b.takeControl(n);
    expect((request?.args ?? []).slice(3)).toEqual(
      all.filter((id) => !id.startsWith('nope') && !id.startsWith('done')),
    );
  });

  it('remembers at most revokeMax ids, the oldest going first', async () => {
    const b = await broker({ revokeMax: 2 });
    await b.enqueue([job('x'), job('y'), job('z')]);
    await b.revoke(['x'], GRACE);
    await b.revoke(['y'], GRACE);
    await b.revoke(['z'], GRACE);
    expect((await b.listRevoked()).map((r) => r.id).sort()).toEqual(['y', 'z']);
  });
});
