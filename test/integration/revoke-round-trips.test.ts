/**
 * What a revoke of many ids costs Redis in round trips, counted at a proxy
 * between the client and a real redis-server: requests, not time.
 */
import { afterEach, expect, inject, it } from 'vitest';
import { chain, task } from 'prefork';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { cleanup, makeClient, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

it('ids that name no job are checked for a workflow all at once, not one read each; a step is still found', async () => {
  const redisUrl = inject('redisUrl');
  const namespace = uniqueName('rrt');
  const direct = makeClient(redisUrl, namespace);
  // A chain's second step waits in no queue until the first ends (no node runs here): its id names its workflow.
  const flow = await direct.enqueue(chain(task('note', ['a']), task('note', ['b'])));
  const stepId = `${flow.id}.2`;
  expect((await flow.state())?.tree?.children?.[1]?.id).toBe(stepId);
  // Plain ids, and ids shaped as the steps of a workflow that does not exist.
  const unknown = [
    ...Array.from({ length: 500 }, (_, i) => `nope-${i}`),
    ...Array.from({ length: 500 }, (_, i) => `gone.${i}`),
  ];

  const proxy = await TcpProxy.start(redisUrl);
  try {
    const revoking = makeClient(proxy.url, namespace);
    await revoking.getResult('warm-up');
    proxy.watch(':wf:');
    const outcomes = await revoking.revokeMany([...unknown, stepId]);
    expect(outcomes.slice(0, unknown.length)).toEqual(unknown.map((id) => ({ id, outcome: 'unknown' })));
    expect(outcomes[unknown.length]).toMatchObject({
      id: stepId,
      outcome: 'revoked',
      unstarted: true,
      workflow: flow.id,
    });
    // Requests naming a workflow's key: one read per id was over a thousand; batched, a handful
    // (the check's pipeline, however the socket splits it, and the step's own reads).
    expect(proxy.sentCount(':wf:')).toBeLessThan(20);
    await revoking.close();
  } finally {
    await proxy.close();
  }
  expect((await direct.getState(stepId))?.state).toBe('REVOKED');
});
