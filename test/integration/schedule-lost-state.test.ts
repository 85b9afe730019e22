/**
 * Redis loses its data (FLUSHALL, a restart without persistence) while a
 * node is stopped (SIGSTOP) across ticks the other nodes fire. Back, the
 * stopped node finds the state gone and stores it again: not from the
 * latest tick it saw fired, which is older than the ticks the others fired
 * meanwhile (firing them again would fire a tick twice), but from now. Each
 * tick is enqueued at most once, whatever the entry's misfire rule.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { fixture, newLedger, startNode, uniqueName, type NodeProcess } from '../helpers/worker.js';

const own = ownRedisPerTest();

/** Distinct job ids per tick of the entry `label`, from the ledger the task appends to. */
function jobsPerTick(ledger: string, label: string): Map<number, Set<string>> {
  let text = '';
  try {
    text = readFileSync(ledger, 'utf8');
  } catch {
    // no job ran yet
  }
  const per = new Map<number, Set<string>>();
  for (const line of text.split('\n')) {
    const [l, at, id = ''] = line.split(' ');
    if (l !== label) continue;
    const tick = Number(at);
    per.set(tick, (per.get(tick) ?? new Set()).add(id));
  }
  return per;
}

const latestTick = (ledger: string, label: string): number => Math.max(0, ...jobsPerTick(ledger, label).keys());

async function redisNow(): Promise<number> {
  const [s, us] = await own.raw.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

describe('a schedule whose state Redis lost while a node was stopped', () => {
  it('the stopped node, back first, fires none of the ticks the others fired: each tick once', async () => {
    const ledger = newLedger();
    const namespace = uniqueName('lost');
    const options = {
      app: fixture('tasks-schedule.mjs'),
      broker: own.server.url,
      namespace,
      concurrency: 1,
      schedule: {
        all: { task: 'tick', args: ['all'], every: '1s', misfire: 'all' },
        once: { task: 'tick', args: ['once'], every: '1s', misfire: 'once' },
      },
    };
    const nodes: NodeProcess[] = await Promise.all(
      [0, 1, 2].map(() => startNode(options, ledger, 'schedule-node.mjs')),
    );
    const [a, b, stopped] = nodes as [NodeProcess, NodeProcess, NodeProcess];
    try {
      await expect.poll(() => latestTick(ledger, 'all'), { timeout: 60_000 }).toBeGreaterThan(0);
      stopped.proc.kill('SIGSTOP');
      const stoppedAt = await redisNow();
      // The others fire three ticks, and their jobs run.
      for (const label of ['all', 'once'])
        await expect
          .poll(() => latestTick(ledger, label), { timeout: 60_000, interval: 50 })
          .toBeGreaterThanOrEqual(stoppedAt + 3000);
      // The data is lost while no node runs; the stopped node comes back first and stores the entries again.
      a.proc.kill('SIGSTOP');
      b.proc.kill('SIGSTOP');
      await own.raw.flushall();
      const lostAt = await redisNow();
      stopped.proc.kill('SIGCONT');
      await expect.poll(() => own.raw.exists(`{${namespace}}:sched:all`, `{${namespace}}:sched:once`)).toBe(2);
      a.proc.kill('SIGCONT');
      b.proc.kill('SIGCONT');
      // The entries fire on from there.
      for (const label of ['all', 'once'])
        await expect.poll(() => latestTick(ledger, label), { timeout: 60_000 }).toBeGreaterThanOrEqual(lostAt + 3000);
      for (const node of nodes) node.proc.kill('SIGTERM');
      await Promise.all(nodes.map((n) => n.exited));
    } finally {
      for (const node of nodes) node.proc.kill('SIGCONT');
    }
    for (const label of ['all', 'once']) {
      const twice = [...jobsPerTick(ledger, label)].filter(([, ids]) => ids.size > 1).map(([tick]) => tick);
      expect(twice, `${label}: ticks enqueued more than once`).toEqual([]);
    }
  });
});
