/**
 * `prefork control` and `prefork inspect stats` as people use them: the CLI
 * in its own process, worker nodes in theirs, the real Redis from the test
 * setup (its own db number). Nodes run with a short lease so they take
 * requests quickly (a node takes its requests with its heartbeat).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import '../setup/provided.js';
import { createBroker } from '../../dist/broker/index.js';
import { askNodes } from '../../dist/cli/control-request.js';
import { Worker } from '../../dist/index.js';
import { cleanup, emptyRedisDb, fixture, newLedger, startNode, type NodeProcess } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 8;
const LEASE_MS = 1_500;

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Stats {
  node: string;
  nodeId: string;
  stats: { pool: { processes: { pid: number; state: string }[]; autoscale?: { max: number; min: number } } } | null;
  error?: string;
}

describe('prefork control and inspect stats against worker nodes', () => {
  let url = '';
  let a: NodeProcess;
  let b: NodeProcess;
  const live = (s: Stats): number => s.stats!.pool.processes.filter((p) => p.state !== 'exited').length;
  const stats = (...extra: string[]): Stats[] => {
    const r = run(['inspect', 'stats', '--json', '--broker', url, ...extra]);
    expect(r.code).toBe(0);
    return (JSON.parse(r.stdout) as Stats[]).sort((x, y) => x.node.localeCompare(y.node));
  };

  beforeAll(async () => {
    url = await emptyRedisDb(DB);
    const ledger = newLedger();
    a = await startNode({ broker: url, name: 'ctl-a', concurrency: 2, lease: LEASE_MS }, ledger);
    b = await startNode({ broker: url, name: 'ctl-b', autoscale: '3,1', lease: LEASE_MS }, ledger);
  });
  afterAll(cleanup);

  it('ping: every live node answers with its name, pid and uptime', () => {
    const r = run(['control', 'ping', '--broker', url]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n').sort();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(`^-> ctl-a \\(${a.nodeId.replace(/[#]/g, '\\#')}\\): pong \\(pid ${a.proc.pid}, up [\\d.]+ s\\)$`),
    );
    expect(lines[1]).toMatch(new RegExp(`^-> ctl-b \\(.*\\): pong \\(pid ${b.proc.pid},`));
    const json = JSON.parse(run(['control', 'ping', '--json', '--broker', url]).stdout) as {
      node: string;
      ok: boolean;
      value: { pid: number };
    }[];
    expect(json.map((j) => [j.node, j.ok, j.value.pid]).sort()).toEqual([
      ['ctl-a', true, a.proc.pid],
      ['ctl-b', true, b.proc.pid],
    ]);
  });

  it('--node targets one node by name', () => {
    const r = run(['control', 'ping', '--node', 'ctl-b', '--broker', url]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^-> ctl-b /)]);
  });

  it("grow and shrink resize one node's pool; inspect stats shows it", () => {
    expect(stats('--node', 'ctl-a').map(live)).toEqual([2]);
    const grown = run(['control', 'grow', '2', '--node', 'ctl-a', '--broker', url]);
    expect(grown.code).toBe(0);
    expect(grown.stdout).toMatch(/-> ctl-a .*: OK, 4 processes/);
    expect(stats('--node', 'ctl-a').map(live)).toEqual([4]);
    const shrunk = run(['control', 'shrink', '3', '--node', 'ctl-a', '--broker', url]);
    expect(shrunk.code).toBe(0);
    expect(shrunk.stdout).toMatch(/-> ctl-a .*: OK, 3 retired, 1 processes/);
  });

  it('autoscale changes the bounds of an autoscaling node; a node without autoscale answers with an error (exit 1)', () => {
    const r = run(['control', 'autoscale', '4,2', '--node', 'ctl-b', '--broker', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/-> ctl-b .*: OK, autoscale 4,2/);
    expect(stats('--node', 'ctl-b')[0]!.stats!.pool.autoscale).toEqual({ max: 4, min: 2 });
    const refused = run(['control', 'autoscale', '4,2', '--node', 'ctl-a', '--broker', url]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/-> ctl-a .*: error: .*autoscale/);
  });

  it('inspect stats prints a table with one row per node', () => {
    const r = run(['inspect', 'stats', '--broker', url]);
    expect(r.code).toBe(0);
    const [header, ...rows] = r.stdout.trim().split('\n');
    expect(header).toMatch(/^NODE +PROCESSES +BUSY +RESERVED +DONE/);
    expect(rows.map((row) => row.split(/ +/)[0]).sort()).toEqual(['ctl-a', 'ctl-b']);
  });

  it('an unknown node is a one-line error, exit 1', () => {
    const r = run(['control', 'ping', '--node', 'nobody', '--broker', url]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringContaining("no live worker node named 'nobody'")]);
  });

  it('a node takes a request at once, not only with its heartbeat (a 2 min lease: its first beat is 48 s away)', async () => {
    const slow = await startNode({ broker: url, name: 'ctl-slow', concurrency: 1, lease: 120_000 }, newLedger());
    const r = run(['control', 'ping', '--node', 'ctl-slow', '--timeout', '20s', '--broker', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`-> ctl-slow .*: pong \\(pid ${slow.proc.pid},`));
    slow.proc.kill('SIGTERM');
    expect(await slow.exited).toEqual({ code: 0, signal: null });
  });

  it('shutdown stops the node warm: it replies, exits 0 and leaves the cluster', async () => {
    const r = run(['control', 'shutdown', '--node', 'ctl-b', '--broker', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/-> ctl-b .*: OK, stopping \(warm\)/);
    expect(await b.exited).toEqual({ code: 0, signal: null });
    const nodes = JSON.parse(run(['inspect', 'nodes', '--json', '--broker', url]).stdout) as { name: string }[];
    expect(nodes.map((n) => n.name)).toEqual(['ctl-a']);
  });
});

describe('prefork control: bad arguments are one line naming the value, exit 2', () => {
  it.each([
    [['control', 'fly'], "'fly'"],
    [['control', 'grow'], 'grow'],
    [['control', 'grow', 'zero'], "'zero'"],
    [['control', 'shrink', '0'], "'0'"],
    [['control', 'autoscale', '3,5'], "'3,5'"],
    [['control', 'ping', 'extra'], "'extra'"],
    [['control', 'ping', '--timeout', 'soon'], "'soon'"],
    [['inspect', 'stats', '--timeout', '-1s'], "'-1s'"],
    [['inspect', 'everything'], "'everything'"],
  ])('%j', (args, named) => {
    const r = run([...args, '--broker', 'redis://127.0.0.1:1']);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(named);
  });
});

describe('control over memory:// (one process: the same broker interface)', () => {
  it('a Worker on memory:// answers ping and grow sent through the broker', async () => {
    const url = `memory://control-${process.pid}`;
    const worker = new Worker({
      app: fixture('worker-tasks.mjs'),
      broker: url,
      concurrency: 1,
      lease: 1_000,
      logger: pino({ level: 'silent' }),
      pool: { env: { PREFORK_TEST_LEDGER: '/dev/null' } },
    });
    await worker.start();
    const sender = createBroker(url, { logger: pino({ level: 'silent' }) });
    try {
      const [pong] = await askNodes(sender, 'ping', [], undefined, 10_000);
      expect(pong!.reply).toMatchObject({
        node: worker.name,
        nodeId: worker.nodeId,
        ok: true,
        value: { pid: process.pid },
      });
      const [grown] = await askNodes(sender, 'grow', [1], worker.name, 10_000);
      expect(grown!.reply).toMatchObject({ ok: true, value: { processes: 2 } });
      expect(worker.pool.size).toBe(2);
    } finally {
      await worker.stop();
      await sender.close();
    }
  });
});
