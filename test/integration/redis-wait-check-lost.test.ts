/**
 * A blocking wait whose read reserved jobs, then lost the connection in the
 * lease check that follows it (a failover, a proxy cut): the wait fails,
 * and the node's next fetch takes those jobs back. They are reserved under
 * this live node, so no recovery of a dead node would ever return them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fetchFrom, ids, job, registerNode, Scope } from './redis-helpers.js';

const NODE = 'waiting-node';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('RedisBroker: a wait whose lease check is lost', () => {
  it('fails, and the next fetch hands out the jobs its read reserved', async () => {
    const scope = new Scope();
    cleanups.push(() => scope.cleanup());
    const { proxy, broker: b } = await scope.brokerThroughProxy();
    const direct = await scope.broker();
    await registerNode(b, NODE, ['q']);
    await b.waitForWork(NODE, ['q'], 10, new AbortController().signal, 1); // creates the group
    // No leaseHeld: the lease is checked with the fetch script on the command connection after the read.
    const waiting = b.waitForWork(NODE, ['q'], 60_000, new AbortController().signal, 1);
    waiting.catch(() => undefined);
    await expect
      .poll(async () => /flags=b .*cmd=xreadgroup/.test((await scope.raw.client('LIST')) as string))
      .toBe(true);
    // The check is the fetch script (EVAL or EVALSHA), the first script this connection sends after the read.
    const cut = proxy.cutOnRequest('eval');
    const j = job('q');
    await direct.enqueue([j]);
    await cut;
    await expect(waiting).rejects.toThrow();
    // Reserved under this node by the read: the next fetch takes it back.
    await expect.poll(async () => ids((await fetchFrom(b, NODE, ['q'], 1)).deliveries)).toEqual([j.id]);
  });
});
