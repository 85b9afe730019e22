/**
 * `prefork control grow | shrink | autoscale` as a new user tries them on
 * real worker nodes: an autoscaling node's bounds move with a grow instead of
 * cutting it back, a shrink stops at the autoscale min, `inspect nodes` shows
 * the sizing as it is now, and the prefetch limit follows every change.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../setup/provided.js';
import { PREFETCH_FLOOR_PER_PROCESS } from '../../dist/consumer/prefetch.js';
import { cleanup, emptyRedisDb, newLedger, startNode, type NodeProcess } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 16;
const LEASE_MS = 1_500;

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface NodeStats {
  node: string;
  stats: {
    consumer: { prefetchLimit: number };
    pool: { processes: { state: string }[]; autoscale?: { max: number; min: number } };
  };
}

describe('control grow, shrink and autoscale: bounds, floor, inspect nodes and the prefetch limit', () => {
  let url = '';
  let fixed: NodeProcess;
  let scaling: NodeProcess;
  const statsOf = (name: string): NodeStats['stats'] => {
    const r = run(['inspect', 'stats', '--json', '--node', name, '--broker', url]);
    expect(r.code).toBe(0);
    return (JSON.parse(r.stdout) as NodeStats[])[0]!.stats;
  };
  const live = (name: string): number => statsOf(name).pool.processes.filter((p) => p.state !== 'exited').length;
  const concurrencyOf = (name: string): string => {
    const r = run(['inspect', 'nodes', '--json', '--broker', url]);
    expect(r.code).toBe(0);
    return (JSON.parse(r.stdout) as { name: string; concurrency: string }[]).find((n) => n.name === name)!.concurrency;
  };

  beforeAll(async () => {
    url = await emptyRedisDb(DB);
    const ledger = newLedger();
    fixed = await startNode({ broker: url, name: 'size-fixed', concurrency: 2, lease: LEASE_MS }, ledger);
    scaling = await startNode({ broker: url, name: 'size-auto', autoscale: '3,1', lease: LEASE_MS }, ledger);
  });
  afterAll(cleanup);

  it('grow past max on an autoscaling node raises max to the new size, so the Autoscaler keeps it', async () => {
    expect(fixed.nodeId).toBeDefined();
    expect(scaling.nodeId).toBeDefined();
    expect(concurrencyOf('size-auto')).toBe('3,1');
    const r = run(['control', 'grow', '4', '--node', 'size-auto', '--broker', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/-> size-auto .*: OK, 5 processes \(\+4\), autoscale 5,1$/m);
    expect(statsOf('size-auto').pool.autoscale).toEqual({ max: 5, min: 1 });
    await expect.poll(() => live('size-auto'), { message: 'five children up', timeout: 30_000 }).toBe(5);
    // The node's record follows: inspect nodes shows the bounds now, not those it started with.
    await expect.poll(() => concurrencyOf('size-auto')).toBe('5,1');
  });

  it('shrink never goes below the autoscale min', async () => {
    const r = run(['control', 'shrink', '10', '--node', 'size-auto', '--broker', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/-> size-auto .*: OK, 4 retired, 1 processes, autoscale 5,1$/m);
    await expect.poll(() => live('size-auto'), { message: 'the idle children retire', timeout: 30_000 }).toBe(1);
    const again = run(['control', 'shrink', '1', '--node', 'size-auto', '--broker', url]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/OK, 0 retired, 1 processes, autoscale 5,1$/m);
    expect(live('size-auto')).toBe(1);
  });

  it('inspect nodes shows the bounds after control autoscale, and a fixed node its size after grow and shrink', async () => {
    expect(run(['control', 'autoscale', '6,2', '--node', 'size-auto', '--broker', url]).stdout).toMatch(
      /OK, autoscale 6,2 \(2 processes now\)/,
    );
    await expect.poll(() => concurrencyOf('size-auto')).toBe('6,2');
    const table = run(['inspect', 'nodes', '--broker', url]).stdout;
    expect(table).toMatch(/size-auto#\S+ .* 6,2 /);

    await expect.poll(() => concurrencyOf('size-fixed')).toBe('2');
    expect(run(['control', 'grow', '3', '--node', 'size-fixed', '--broker', url]).stdout).toMatch(
      /OK, 5 processes \(\+3\)$/m,
    );
    await expect.poll(() => concurrencyOf('size-fixed')).toBe('5');
    expect(run(['control', 'shrink', '1', '--node', 'size-fixed', '--broker', url]).code).toBe(0);
    await expect.poll(() => concurrencyOf('size-fixed')).toBe('4');
  });

  it('the prefetch limit follows grow, shrink and autoscale (sized from the size, or autoscale max)', () => {
    // The self-sized limit starts at its floor: 4 per child (no backlog measured it higher).
    expect(statsOf('size-fixed').consumer.prefetchLimit).toBe(4 * PREFETCH_FLOOR_PER_PROCESS);
    expect(run(['control', 'grow', '2', '--node', 'size-fixed', '--broker', url]).code).toBe(0);
    expect(statsOf('size-fixed').consumer.prefetchLimit).toBe(6 * PREFETCH_FLOOR_PER_PROCESS);
    expect(run(['control', 'shrink', '5', '--node', 'size-fixed', '--broker', url]).code).toBe(0);
    expect(statsOf('size-fixed').consumer.prefetchLimit).toBe(1 * PREFETCH_FLOOR_PER_PROCESS);

    expect(statsOf('size-auto').consumer.prefetchLimit).toBe(6 * PREFETCH_FLOOR_PER_PROCESS);
    expect(run(['control', 'autoscale', '2,1', '--node', 'size-auto', '--broker', url]).code).toBe(0);
    expect(statsOf('size-auto').consumer.prefetchLimit).toBe(2 * PREFETCH_FLOOR_PER_PROCESS);
  });
});
