/**
 * A workflow revoked by its id on Redis, while the network is slow: the
 * revoke takes its members out in round trips (per chunk of members), and the
 * nodes must know of every member before the first is taken out, else a node
 * runs a held member, then the callback its members' end enqueues.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, expect, inject, it } from 'vitest';
import { chord, task, WorkflowError } from 'prefork';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { cleanup, countsOf, makeClient, makeWorker, newLedger, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

function ledgerLines(ledger: string): string[] {
  try {
    return readFileSync(ledger, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

it('the nodes hear of every member before the revoke takes the first out: a held member, the callback, never run', async () => {
  const redisUrl = inject('redisUrl');
  const namespace = uniqueName('wfr');
  const ledger = newLedger();
  // One child, busy with a blocker; the chord's members wait held by the node (prefetched, not started).
  await makeWorker({
    broker: redisUrl,
    namespace,
    ledger,
    concurrency: 1,
    prefetchMultiplier: 4,
    trackStarted: true,
  }).start();
  const direct = makeClient(redisUrl, namespace);
  const blocker = await direct.enqueue('waitForFile', ['go']);
  await expect.poll(async () => (await direct.getState(blocker.id))?.state, { timeout: 20_000 }).toBe('STARTED');
  const handle = await direct.enqueue(chord([task('note', ['a']), task('note', ['b'])], task('note', ['callback'])));
  await expect.poll(async () => (await countsOf(direct, ['default']))[0]?.waiting, { timeout: 20_000 }).toBe(0);
  const tree = (await handle.state())?.tree;
  const callbackId = tree?.children?.[1]?.id as string;
  const memberIds = (tree?.children?.[0]?.children ?? []).map((m) => m.id as string);
  expect(memberIds).toHaveLength(2);

  // The revoking client's replies are held from its first look at a member on (the callback comes first).
  const proxy = await TcpProxy.start(redisUrl);
  try {
    const revoking = makeClient(proxy.url, namespace);
    const held = proxy.holdRepliesAfter(`:res:${callbackId}`);
    const outcome = revoking.revoke(handle.id);
    await held;
    // The revoke stalls mid-way; the node goes on: its child is freed, the held members come to it.
    writeFileSync(`${ledger}.go`, '');
    await expect.poll(async () => (await direct.getState(blocker.id))?.state, { timeout: 20_000 }).toBe('SUCCESS');
    for (const id of memberIds)
      await expect
        .poll(async () => (await direct.getState(id))?.state, { timeout: 20_000 })
        .toMatch(/^(REVOKED|SUCCESS)$/);
    proxy.releaseReplies();
    expect(await outcome).toMatchObject({ outcome: 'revoked', members: 3 });
    await revoking.close();
  } finally {
    await proxy.close();
  }
  const err = await handle.result({ timeout: 30_000 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowError);
  for (const id of [...memberIds, callbackId]) expect((await direct.getState(id))?.state, id).toBe('REVOKED');
  expect(ledgerLines(ledger)).toEqual([]);
});
