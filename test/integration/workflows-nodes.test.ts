/**
 * Workflows across worker nodes in their own processes, on Redis: a group's
 * members spread over two nodes keep their order, and a chord whose member's
 * node is SIGKILLed right after the member finished (before its result
 * reached Redis) calls back exactly once.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { chord, group, task } from 'prefork';
import { cleanup, makeClient, makeWorker, newLedger, startNode, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

function lines(ledger: string, tag: string): string[] {
  return readFileSync(ledger, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(`${tag} `));
}

describe('Workflows across nodes', () => {
  it('a group keeps member order with its members run on two nodes', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('wf');
    const ledger = newLedger();
    const options = { broker: url, namespace, concurrency: 1, prefetchMultiplier: 1 };
    const a = await startNode({ ...options, name: 'node-a' }, ledger);
    const b = await startNode({ ...options, name: 'node-b' }, ledger);
    const client = makeClient(url, namespace);
    const handle = await client.enqueue(group(Array.from({ length: 8 }, (_, i) => task('whereAmI', [i, 150]))));
    const values = (await handle.result({ timeout: 60_000 })) as [number, number][];
    expect(values.map(([i]) => i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(values.map(([, pid]) => pid))).toEqual(new Set([a.proc.pid, b.proc.pid]));
  });

  it('a chord whose member node is SIGKILLed right after the member finished calls back exactly once', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('wf');
    const ledger = newLedger();
    const a = await startNode({ broker: url, namespace, concurrency: 1, lease: 1500, name: 'node-a' }, ledger);
    const client = makeClient(url, namespace);
    const key = uniqueName('k');
    const handle = await client.enqueue(
      chord(
        [task('finishThenKillNode', [key, 5]), task('add', [1, 1]), task('add', [2, 2])],
        task('note', ['callback']),
      ),
    );
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(lines(ledger, 'killed')).toHaveLength(1);
    // Another node recovers the member once A's lease expired, and runs it again.
    await makeWorker({ broker: url, namespace, ledger, concurrency: 2, lease: 1500, name: 'node-b' }).start();
    expect(await handle.result({ timeout: 60_000 })).toEqual([[5, 2, 4]]);
    expect(lines(ledger, 'callback')).toHaveLength(1);
    const view = await handle.state();
    expect(view?.tree.children?.[0]?.children?.map((m) => m.state)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
  });
});
