/**
 * `prefork control rate-limit` and `--rate-limit` as people use them: the
 * CLI in its own process, worker nodes in theirs, the real Redis from the
 * test setup (its own db number). The rate set at run time reaches every
 * live node, is remembered for nodes that start later, and spaces again the
 * jobs already waiting their turn.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../setup/provided.js';
import { Client, type ResultRecord } from '../../dist/index.js';
import {
  cleanup,
  countsOf,
  emptyRedisDb,
  fixture,
  newLedger,
  silent,
  startNode,
  type NodeProcess,
} from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 32;
const TASKS = fixture('tasks-rate-limited.mjs');
const HOUR = 3_600_000;

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function startsOf(ledger: string, ids: ReadonlySet<string>): number[] {
  let text: string;
  try {
    text = readFileSync(ledger, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' '))
    .filter(([id]) => ids.has(id!))
    .map(([, , at]) => Number(at));
}

function busiestSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0; i < sorted.length; i++) {
    let n = 0;
    while (i + n < sorted.length && sorted[i + n]! < sorted[i]! + 1000) n++;
    most = Math.max(most, n);
  }
  return most;
}

describe('prefork control rate-limit against worker nodes', () => {
  let url = '';
  let ledger = '';
  let node: NodeProcess;
  let client: Client;

  beforeAll(async () => {
    url = await emptyRedisDb(DB);
    ledger = newLedger();
    node = await startNode({ app: TASKS, broker: url, name: 'rl-a', concurrency: 2 }, ledger);
    client = new Client({ broker: url, logger: silent });
  });
  afterAll(async () => {
    await client.close();
    await cleanup();
  });

  /** Enqueues n jobs of `slow` (1/m) and waits until one started and the others wait in Redis for their turn. */
  async function backlog(n: number): Promise<string[]> {
    const handles = await Promise.all(Array.from({ length: n }, () => client.enqueue('slow', [])));
    const ids = new Set(handles.map((h) => h.id));
    await expect.poll(() => startsOf(ledger, ids).length, { timeout: 20_000 }).toBe(1);
    await expect.poll(async () => (await countsOf(client, ['default']))[0]!.delayed, { timeout: 20_000 }).toBe(n - 1);
    return [...ids];
  }

  it(
    'a new rate reaches the live node and spaces the waiting jobs again; off lets a backlog through',
    { timeout: 90_000 },
    async () => {
      const held = await backlog(8);
      const faster = run(['control', 'rate-limit', 'slow', '4/s', '--broker', url]);
      expect(faster.stderr).toBe('');
      expect(faster.code).toBe(0);
      expect(faster.stdout).toContain('rate limit of slow: 4/s (cluster-wide; 7 waiting jobs spaced again)');
      expect(faster.stdout).toMatch(new RegExp(`-> rl-a \\(${node.nodeId}\\): OK, slow at 4/s`));
      await Promise.all(held.map((id) => client.waitForResult(id, 30_000)));
      const respaced = startsOf(ledger, new Set(held))
        .sort((a, b) => a - b)
        .slice(1);
      expect(respaced).toHaveLength(7);
      expect(busiestSecond(respaced)).toBeLessThanOrEqual(5);

      // New jobs follow the new rate too.
      const fresh = await Promise.all(Array.from({ length: 10 }, () => client.enqueue('slow', [])));
      await Promise.all(fresh.map((h) => h.result({ timeout: 30_000 })));
      expect(busiestSecond(startsOf(ledger, new Set(fresh.map((h) => h.id))))).toBeLessThanOrEqual(5);

      expect(run(['control', 'rate-limit', 'slow', '1/m', '--broker', url]).code).toBe(0);
      const stuck = await backlog(5);
      const off = run(['control', 'rate-limit', 'slow', 'off', '--json', '--broker', url]);
      expect(off.code).toBe(0);
      expect(JSON.parse(off.stdout)).toEqual([
        { node: 'rl-a', nodeId: node.nodeId, ok: true, value: { task: 'slow', rateLimit: 'off' } },
      ]);
      await Promise.all(stuck.map((id) => client.waitForResult(id, 30_000)));
    },
  );

  it(
    'prefork result tells a job waiting for its turn, and where a new rate moved it',
    { timeout: 90_000 },
    async () => {
      expect(run(['control', 'rate-limit', 'slow', '1/m', '--broker', url]).code).toBe(0);
      const held = await backlog(4);
      const result = (id: string) => JSON.parse(run(['result', id, '--json', '--broker', url]).stdout) as ResultRecord;
      const waiting = held.map(result).filter((r) => r.rateLimited === true);
      expect(waiting).toHaveLength(3);
      for (const r of waiting) {
        expect(r).toMatchObject({ state: 'PENDING', retries: 0 });
        expect(r.dueAt).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
      }
      expect(run(['result', waiting[0]!.id, '--broker', url]).stdout).toMatch(
        /state: +PENDING \(waiting for its rate-limit turn, due at \d{4}-\d\d-\d\dT/,
      );

      // 1/h spaces them again from now, an hour apart: the job index follows them.
      const before = Date.now();
      expect(run(['control', 'rate-limit', 'slow', '1/h', '--broker', url]).code).toBe(0);
      const moved = waiting.map((r) => result(r.id)).filter((r) => r.state === 'PENDING');
      expect(moved.filter((r) => r.rateLimited === true && r.dueAt! >= before + HOUR - 60_000)).toHaveLength(2);

      expect(run(['control', 'rate-limit', 'slow', 'off', '--broker', url]).code).toBe(0);
      await Promise.all(held.map((id) => client.waitForResult(id, 30_000)));
    },
  );

  it('a node that starts later follows the rate remembered in Redis', async () => {
    node.proc.kill('SIGTERM');
    expect((await node.exited).code).toBe(0);
    // `plain` has no limit of its own: only the remembered rate can space it.
    const idle = run(['control', 'rate-limit', 'plain', '2/s', '--broker', url]);
    expect(idle.code).toBe(0);
    expect(idle.stdout).toContain('no live worker nodes: they read it when they start');
    node = await startNode({ app: TASKS, broker: url, name: 'rl-b', concurrency: 2 }, ledger);
    const handles = await Promise.all(Array.from({ length: 6 }, () => client.enqueue('plain', [])));
    await Promise.all(handles.map((h) => h.result({ timeout: 30_000 })));
    expect(busiestSecond(startsOf(ledger, new Set(handles.map((h) => h.id))))).toBeLessThanOrEqual(3);
  });

  it("default drops the rate set at run time: the live node follows the task's own limit again", async () => {
    expect(run(['control', 'rate-limit', 'slow', 'off', '--broker', url]).code).toBe(0);
    // Off: slow's own 1/m holds nothing back.
    const free = await Promise.all(Array.from({ length: 3 }, () => client.enqueue('slow', [])));
    await Promise.all(free.map((h) => h.result({ timeout: 30_000 })));
    const back = run(['control', 'rate-limit', 'slow', 'default', '--broker', url]);
    expect(back).toMatchObject({ code: 0, stderr: '' });
    expect(back.stdout).toContain(
      "rate limit of slow: the one set at run time dropped (cluster-wide; jobs follow their own or their task's rateLimit again)",
    );
    expect(back.stdout).toMatch(new RegExp(`-> rl-b \\(${node.nodeId}\\): OK, slow at its own rate limit again`));
    const stored = await (client.broker as unknown as { rateLimits(): Promise<Map<string, string>> }).rateLimits();
    expect(stored.has('slow')).toBe(false);
    // Its own 1/m again: one starts, the others wait their turn.
    await backlog(3);
  });

  it('a bad rate or a missing argument is a usage error (exit 2) naming it; nothing is stored', async () => {
    const badEnqueue = run(['enqueue', 'plain', '--rate-limit', '10/x', '--broker', url]);
    expect(badEnqueue.code).toBe(2);
    expect(badEnqueue.stderr).toMatch(/--rate-limit <rate>' argument '10\/x' is invalid/);
    const badControl = run(['control', 'rate-limit', 'unset', '5/y', '--broker', url]);
    expect(badControl.code).toBe(2);
    // In a flag's words, not the library's ("invalid option rateLimit").
    expect(badControl.stderr).toBe(
      `error: control rate-limit: argument '5/y' is invalid. expected a rate like "100/s", "10/m" or "1000/h", "off", or "default" (the task's own limit again)\n`,
    );
    const missing = run(['control', 'rate-limit', 'unset', '--broker', url]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/control rate-limit: expected a task and a rate/);
    const withNode = run(['control', 'rate-limit', 'unset', '5/s', '--node', 'rl-b', '--broker', url]);
    expect(withNode.code).toBe(2);
    const stored = await (client.broker as unknown as { rateLimits(): Promise<Map<string, string>> }).rateLimits();
    expect(stored.has('unset')).toBe(false);
  });
});
