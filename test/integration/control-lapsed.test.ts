/**
 * A control request is only the news of a setting the broker remembers. A
 * node that takes a resume or a rate-limit request too late (it was
 * stopped, SIGSTOP, past the request's timeout but within its lease: no
 * fencing, no registration that would read the settings) follows the
 * remembered settings from its next heartbeat, as a node that starts later
 * does: the queue runs again, and a task with no limit of its own keeps the
 * rate set at run time.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../setup/provided.js';
import { Client, RevokedError } from '../../dist/index.js';
import { createBroker } from '../../dist/broker/index.js';
import { cleanup, countsOf, emptyRedisDb, fixture, newLedger, silent, startNode } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 58;
const TASKS = fixture('tasks-rate-limited.mjs');
/** Long enough that the stop below never costs the node its lease (a fencing would read the settings anyway). */
const LEASE = '30s';

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function started(ledger: string, ids: ReadonlySet<string>): number {
  let text: string;
  try {
    text = readFileSync(ledger, 'utf8');
  } catch {
    return 0;
  }
  return text.split('\n').filter((line) => ids.has(line.split(' ')[0]!)).length;
}

describe('control requests that lapsed before the node took them', () => {
  let url = '';
  let ledger = '';
  let client: Client;

  beforeAll(async () => {
    url = await emptyRedisDb(DB);
    ledger = newLedger();
    client = new Client({ broker: url, logger: silent });
  });
  afterAll(async () => {
    await client.close();
    await cleanup();
  });

  it('a resume and a rate the node missed are followed from its next heartbeat', { timeout: 90_000 }, async () => {
    const node = await startNode({ app: TASKS, broker: url, name: 'lapse-a', concurrency: 2, lease: LEASE }, ledger);
    expect(run(['control', 'pause', 'default', '--broker', url]).stdout).toMatch(/-> lapse-a .*: OK, paused here/);

    node.proc.kill('SIGSTOP');
    try {
      const resume = run(['control', 'resume', 'default', '--timeout', '200ms', '--broker', url]);
      expect(resume.stdout).toMatch(/queue 'default' resumed on every node/);
      expect(resume.stdout).toMatch(/-> lapse-a .*: no reply within 200 ms/);
      // `plain` has no limit of its own: only the rate set at run time spaces it.
      const rate = run(['control', 'rate-limit', 'plain', '1/h', '--timeout', '200ms', '--broker', url]);
      expect(rate.stdout).toMatch(/-> lapse-a .*: no reply within 200 ms/);
    } finally {
      node.proc.kill('SIGCONT');
    }

    // Both requests are past their timeout: the node drops them when it takes its list.
    const handles = await Promise.all([client.enqueue('plain', []), client.enqueue('plain', [])]);
    const ids = new Set(handles.map((h) => h.id));
    // One starts, the other waits an hour for its turn.
    await expect.poll(() => started(ledger, ids), { timeout: 30_000 }).toBe(1);
    await expect.poll(async () => (await countsOf(client, ['default']))[0]!.delayed, { timeout: 30_000 }).toBe(1);
    expect(started(ledger, ids)).toBe(1);
  });

  it(
    'a revoke the node missed (stopped past the request and its lease, untaken): a held job never runs',
    {
      timeout: 90_000,
    },
    async () => {
      const node = await startNode(
        { broker: url, name: 'lapse-b', concurrency: 1, lease: '1s', queues: ['lapse'] },
        ledger,
        'worker-node.mjs',
      );
      const busy = await client.enqueue('waitForFile' as 'plain', ['gate-b'] as never, { queue: 'lapse' });
      const held = await client.enqueue('record' as 'plain', [] as never, { queue: 'lapse' });
      // Its one child runs `busy`; `held` waits in the node, fetched and not started.
      await expect
        .poll(async () => (await countsOf(client, ['lapse']))[0], { timeout: 30_000 })
        .toMatchObject({
          waiting: 0,
          reserved: 2,
        });
      node.proc.kill('SIGSTOP');
      // A revoke request lives two of the revoker's leases: with the node's (1 s), it lapses while the node is
      // stopped, as the node's lease does (no other node takes its jobs, so its next beat renews it).
      const revoker = createBroker(url, { logger: silent, leaseMs: 1_000 });
      try {
        const outcomes = await revoker.revoke([held.id], { terminate: false, grace: 0 });
        expect(outcomes).toMatchObject([{ outcome: 'revoked' }]);
        await sleep(3_000);
      } finally {
        node.proc.kill('SIGCONT');
        await revoker.close();
      }
      writeFileSync(`${ledger}.gate-b`, '');
      expect(await busy.result({ timeout: 30_000 })).toBe('gate-b');
      await expect(held.result({ timeout: 30_000 })).rejects.toThrow(RevokedError);
      await expect.poll(async () => (await countsOf(client, ['lapse']))[0]!.reserved, { timeout: 30_000 }).toBe(0);
      expect(started(ledger, new Set([held.id]))).toBe(0);
    },
  );
});
