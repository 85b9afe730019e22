/**
 * `prefork worker --schedule <module>`: a bad entry is a usage error (exit
 * 2) naming the entry and what is wrong, before the node starts; a good one
 * runs on the node.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, emptyRedisDb, fixture, newLedger } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 36;

afterEach(cleanup);

describe('prefork worker --schedule', () => {
  it('a cron that does not parse: exit 2, one line naming the entry and the cron', async () => {
    const url = await emptyRedisDb(DB);
    const r = spawnSync(
      process.execPath,
      [CLI, 'worker', '-A', fixture('tasks-schedule.mjs'), '-b', url, '--schedule', fixture('schedule-bad-cron.mjs')],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('--schedule');
    expect(lines[0]).toContain('entry "nightly"');
    expect(lines[0]).toContain('invalid option cron: "0 25 * * *"');
  });

  it('a module that is not a schedule, and one that does not exist: exit 2', () => {
    for (const module of [fixture('tasks-schedule.mjs'), fixture('no-such-schedule.mjs')]) {
      const r = spawnSync(
        process.execPath,
        [CLI, 'worker', '-A', fixture('tasks-schedule.mjs'), '-b', 'memory://x', '--schedule', module],
        { encoding: 'utf8', timeout: 60_000 },
      );
      expect(r.status).toBe(2);
      expect(r.stderr).toContain("'--schedule <module>'");
    }
  });

  it('a good one runs on the node: its ticks fire as jobs that know their tick', async () => {
    const url = await emptyRedisDb(DB);
    const ledger = newLedger();
    const proc = spawn(
      process.execPath,
      [
        CLI,
        'worker',
        '-A',
        fixture('tasks-schedule.mjs'),
        '-b',
        url,
        '-c',
        '1',
        '--schedule',
        fixture('schedule-every-second.mjs'),
      ],
      { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, PREFORK_TEST_LEDGER: ledger } },
    );
    const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
    try {
      await expect
        .poll(
          () => {
            try {
              return readFileSync(ledger, 'utf8').split('\n').filter(Boolean).length;
            } catch {
              return 0;
            }
          },
          { timeout: 60_000 },
        )
        .toBeGreaterThanOrEqual(2);
      // A node with a schedule stands for leader: alone, it leads, and inspect nodes marks it.
      const inspect = (json: boolean): string =>
        spawnSync(process.execPath, [CLI, 'inspect', 'nodes', '-b', url, ...(json ? ['--json'] : [])], {
          encoding: 'utf8',
          timeout: 60_000,
        }).stdout;
      await expect
        .poll(() => (JSON.parse(inspect(true)) as { leader: boolean }[]).map((n) => n.leader))
        .toEqual([true]);
      expect(inspect(false)).toMatch(/^NODE .* LEADER\n.* yes \(token \d+\)\n$/);
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    const [first] = readFileSync(ledger, 'utf8').split('\n');
    const [label, scheduledFor] = first!.split(' ');
    expect(label).toBe('beat');
    expect(Number(scheduledFor) % 1000).toBe(0);
  });
});
