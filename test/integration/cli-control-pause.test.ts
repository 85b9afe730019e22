/**
 * `prefork control pause | resume <queue> [--node NAME]` on real worker
 * nodes: a paused queue is not fetched from (other queues are), `inspect
 * queues` shows it, a node that starts later honours the pause (it is
 * remembered in Redis), a pause on one node leaves the others working, and
 * a resume lets the waiting jobs run.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../setup/provided.js';
import type { Client } from '../../dist/index.js';
import { cleanup, countsOf, emptyRedisDb, makeClient, newLedger, startNode } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 17;
const LEASE_MS = 1_500;

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface QueueRow {
  queue: string;
  waiting: number;
  paused: boolean;
  pausedOn: string[];
}

describe('control pause and resume', () => {
  let url = '';
  let ledger = '';
  let client: Client;
  const queueRow = (queue: string): QueueRow => {
    const r = run(['inspect', 'queues', '--json', '--broker', url]);
    expect(r.code).toBe(0);
    return (JSON.parse(r.stdout) as QueueRow[]).find((q) => q.queue === queue)!;
  };
  /** Runs a `record` job on `queue` to its end; resolves the name of the node that ran it. */
  const ranOn = async (queue: string): Promise<string> => {
    const handle = await client.enqueue('record', [], { queue });
    await handle.result({ timeout: 30_000 });
    return (await client.getResult(handle.id))!.node!;
  };

  beforeAll(async () => {
    url = await emptyRedisDb(DB);
    ledger = newLedger();
    client = makeClient(url);
    await startNode({ broker: url, name: 'pause-a', concurrency: 2, queues: 'pq,other', lease: LEASE_MS }, ledger);
    await startNode({ broker: url, name: 'pause-b', concurrency: 2, queues: 'pq,other', lease: LEASE_MS }, ledger);
  });
  afterAll(cleanup);

  it('a paused queue is not fetched from on any node while the others are; inspect queues shows it', async () => {
    const r = run(['control', 'pause', 'pq', '--broker', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^queue 'pq' paused on every node \(remembered/);
    expect(r.stdout).toMatch(/^-> pause-a \(.*\): OK, paused here: pq$/m);
    expect(r.stdout).toMatch(/^-> pause-b \(.*\): OK, paused here: pq$/m);
    expect(queueRow('pq')).toMatchObject({ paused: true, pausedOn: [] });
    expect(run(['inspect', 'queues', '--broker', url]).stdout).toMatch(/^pq\s+0\s+0\s+0\s+0\s+all nodes\s*$/m);

    await client.enqueue('record', [], { queue: 'pq' });
    // Every fetch plans over all the queues it may take: once one ran 'other', it would have taken 'pq' too.
    for (let i = 0; i < 4; i++) await ranOn('other');
    expect(queueRow('pq')).toMatchObject({ waiting: 1 });
  });

  it('a node that starts after the pause honours it', async () => {
    await startNode({ broker: url, name: 'pause-late', concurrency: 1, queues: 'pq,late', lease: LEASE_MS }, ledger);
    expect(await ranOn('late')).toBe('pause-late');
    expect(await ranOn('late')).toBe('pause-late');
    expect(queueRow('pq')).toMatchObject({ waiting: 1 });
  });

  it('resume on one node of a queue paused everywhere is refused, naming how; resume lets the waiting job run', async () => {
    const refused = run(['control', 'resume', 'pq', '--node', 'pause-a', '--broker', url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /queue 'pq' is paused on every node.*'prefork control resume pq' \(without --node\)/,
    );
    expect(queueRow('pq')).toMatchObject({ paused: true });

    const r = run(['control', 'resume', 'pq', '--broker', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^queue 'pq' resumed on every node$/m);
    expect(r.stdout).toMatch(/^-> pause-late \(.*\): OK, paused here: none$/m);
    await expect.poll(() => queueRow('pq').waiting, { timeout: 30_000 }).toBe(0);
    await expect.poll(async () => (await countsOf(client, ['pq']))[0]!.reserved, { timeout: 30_000 }).toBe(0);
    expect(queueRow('pq')).toMatchObject({ paused: false, pausedOn: [] });
  });

  it('a pause on one node: that node takes none of its jobs, the others take them all', async () => {
    const r = run(['control', 'pause', 'pq', '--node', 'pause-a', '--broker', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^queue 'pq' paused on node 'pause-a'/);
    expect(r.stdout.trim().split('\n')).toHaveLength(2);
    expect(queueRow('pq')).toMatchObject({ paused: false, pausedOn: ['pause-a'] });
    const nodes = await Promise.all(Array.from({ length: 8 }, () => ranOn('pq')));
    expect(nodes.filter((n) => n === 'pause-a')).toEqual([]);
    // Its other queue still runs there.
    const others = await Promise.all(Array.from({ length: 8 }, () => ranOn('other')));
    expect(new Set(others)).toContain('pause-a');

    expect(run(['control', 'resume', 'pq', '--node', 'pause-a', '--broker', url]).code).toBe(0);
    expect(queueRow('pq')).toMatchObject({ paused: false, pausedOn: [] });
  });

  it('bad input: a bad queue name is a usage error (exit 2), an unknown node exits 1, nothing is remembered', () => {
    const bad = run(['control', 'pause', 'a:b', '--broker', url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/control pause: argument 'a:b' is invalid\. expected a queue name/);
    const none = run(['control', 'pause', 'pq', '--node', 'nobody', '--broker', url]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no live worker node named 'nobody'/);
    expect(queueRow('pq')).toMatchObject({ paused: false, pausedOn: [] });
  });
});
