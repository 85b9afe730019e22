/**
 * `prefork worker --schedule <module>`: a bad entry is a usage error (exit
 * 2) naming the entry and what is wrong, before the node starts; a good one
 * runs on the node; `prefork result` finds a tick's job where it waits.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { defineSchedule } from 'prefork';
import { createBroker } from 'prefork/broker';
import { tickJob } from '../../dist/schedule/tick-job.js';
import { cleanup, emptyRedisDb, fixture, newLedger, silent } from '../helpers/worker.js';

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

      // schedule list: the entry, when it runs next, its last run and the job it enqueued.
      const list = (json: boolean): SpawnSyncReturns<string> =>
        spawnSync(process.execPath, [CLI, 'schedule', 'list', '-b', url, ...(json ? ['--json'] : [])], {
          encoding: 'utf8',
          timeout: 60_000,
        });
      const [entry] = JSON.parse(list(true).stdout) as {
        name: string;
        task: string;
        args: unknown[];
        every: number;
        nextRunAt: number;
        nextRun: string;
        lastTick: number;
        lastJobId: string;
      }[];
      expect(entry).toMatchObject({ name: 'beat', task: 'tick', args: ['beat'], every: 1000, queue: 'default' });
      expect(entry!.nextRunAt).toBeGreaterThan(entry!.lastTick);
      expect(entry!.nextRunAt % 1000).toBe(0);
      expect(entry!.nextRun).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
      expect(readFileSync(ledger, 'utf8')).toContain(` ${entry!.lastJobId} `);
      expect(list(false).stdout).toMatch(
        /^NAME +TASK +SCHEDULE +NEXT RUN +LAST RUN +LAST JOB\nbeat +tick +every 1000 ms /,
      );

      // schedule run: one job now, which the node runs.
      const run = spawnSync(process.execPath, [CLI, 'schedule', 'run', 'beat', '-b', url, '--json'], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status).toBe(0);
      const { id } = JSON.parse(run.stdout) as { id: string };
      await expect.poll(() => readFileSync(ledger, 'utf8')).toContain(` ${id} `);
      const unknown = spawnSync(process.execPath, [CLI, 'schedule', 'run', 'nope', '-b', url], { encoding: 'utf8' });
      expect(unknown.status).toBe(2);
      expect(unknown.stderr).toMatch(/argument 'nope' is invalid\. no such schedule entry \(stored: beat\)/);
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    const [first] = readFileSync(ledger, 'utf8').split('\n');
    const [label, scheduledFor] = first!.split(' ');
    expect(label).toBe('beat');
    expect(Number(scheduledFor) % 1000).toBe(0);
  });

  it("prefork result of a tick's job: waiting in its queue, as any job enqueued", async () => {
    const url = await emptyRedisDb(DB);
    const broker = createBroker(url, { logger: silent });
    await broker.connect();
    const entry = defineSchedule({
      e: { task: 'tick', args: ['r'], every: '1s', options: { queue: 'nobody' } },
    }).entries.get('e')!;
    const id = randomUUID();
    try {
      const { states } = await broker.publishSchedule([{ name: 'e', definition: entry.definition, hash: entry.hash }]);
      const last = states[0]!.last;
      const tick = entry.rule.next(last)!;
      const job = { ...tickJob(entry, tick), id };
      // 'early' until the broker's clock reaches the tick, as a node's claim would be.
      await expect
        .poll(async () => {
          const reply = await broker.claimTicks([
            { name: 'e', hash: entry.hash, expectedLast: last, newLast: tick, jobs: [job] },
          ]);
          return reply.results[0]?.outcome;
        })
        .toBe('claimed');
    } finally {
      await broker.close();
    }
    const r = spawnSync(process.execPath, [CLI, 'result', id, '-b', url], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^state: +PENDING \(waiting in queue nobody\)$/m);
  });

  it('schedule run of an entry whose stored definition cannot be read: exit 1, naming the entry, not a flag', async () => {
    const url = await emptyRedisDb(DB);
    const broker = createBroker(url, { logger: silent });
    await broker.connect();
    try {
      // Stored by another program, or another version of prefork.
      await broker.publishSchedule([{ name: 'odd', definition: '{"task":1}', hash: 'h' }]);
    } finally {
      await broker.close();
    }
    const r = spawnSync(process.execPath, [CLI, 'schedule', 'run', 'odd', '-b', url], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^error: stored schedule entry "odd": invalid option definition: .*\n$/);
    expect(r.stderr).not.toContain('--');
  });

  it('schedule list and run over damaged records: every entry listed, each damage named', async () => {
    const url = await emptyRedisDb(DB);
    const broker = createBroker(url, { logger: silent });
    await broker.connect();
    const raw = new Redis(url);
    const { entries } = defineSchedule({
      fine: { task: 'tick', args: ['f'], every: '1m' },
      badTick: { task: 'tick', args: ['t'], every: '1m' },
      badLast: { task: 'tick', args: ['l'], cron: '0 3 * * *' },
      wrong: { task: 'tick', args: ['w'], every: '1m' },
    });
    try {
      await broker.publishSchedule(
        [...entries.values()].map((e) => ({ name: e.name, definition: e.definition, hash: e.hash })),
      );
      // Written by another program.
      await raw.hset('{prefork}:sched:badTick', 'lastTick', 'garbage');
      await raw.hset('{prefork}:sched:badLast', 'last', 'nope');
      await raw.del('{prefork}:sched:wrong');
      await raw.set('{prefork}:sched:wrong', 'x');
    } finally {
      raw.disconnect();
      await broker.close();
    }
    const list = (json: boolean): SpawnSyncReturns<string> =>
      spawnSync(process.execPath, [CLI, 'schedule', 'list', '-b', url, ...(json ? ['--json'] : [])], {
        encoding: 'utf8',
      });
    const table = list(false);
    expect(table.stderr).toBe('');
    expect(table.status).toBe(0);
    const rows = table.stdout.trim().split('\n');
    expect(rows.map((r) => r.split(' ')[0])).toEqual(['NAME', 'badLast', 'badTick', 'fine', 'wrong']);
    expect(rows[1]).toContain('stored schedule entry "badLast": last "nope" is not a time');
    expect(rows[2]).toContain('stored schedule entry "badTick": lastTick "garbage" is not a time');
    expect(rows[3]).toMatch(/^fine +tick +every 60000 ms /);
    expect(rows[4]).toContain('stored schedule entry "wrong": its key holds another type than a hash');

    const views = JSON.parse(list(true).stdout) as {
      name: string;
      task?: string;
      error?: string;
      lastTick?: unknown;
    }[];
    const byName = new Map(views.map((v) => [v.name, v]));
    expect(byName.get('fine')?.error).toBeUndefined();
    // What reads is still shown: the task, and the next run (from now: the latest tick handled does not read).
    expect(byName.get('badLast')).toMatchObject({ task: 'tick', cron: '0 3 * * *' });
    expect(byName.get('badLast')).toHaveProperty('nextRunAt');
    expect(byName.get('badTick')).toMatchObject({ task: 'tick', every: 60_000 });
    expect(byName.get('badTick')).not.toHaveProperty('lastTick');
    expect(byName.get('wrong')).toEqual({
      name: 'wrong',
      error: 'stored schedule entry "wrong": its key holds another type than a hash',
    });

    // run: an entry whose definition reads runs whatever its state; one with none to read says why (exit 1).
    const run = (name: string): SpawnSyncReturns<string> =>
      spawnSync(process.execPath, [CLI, 'schedule', 'run', name, '-b', url, '--json'], { encoding: 'utf8' });
    expect(run('badLast').status).toBe(0);
    const wrong = run('wrong');
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toBe('error: stored schedule entry "wrong": its key holds another type than a hash\n');
  });

  it('schedule remove forgets entries no live node runs; one a node runs and one not stored are named, exit 1', async () => {
    const url = await emptyRedisDb(DB);
    const broker = createBroker(url, { logger: silent });
    await broker.connect();
    const { entries } = defineSchedule({
      gone: { task: 'tick', args: ['g'], every: '1m' },
      live: { task: 'tick', args: ['l'], every: '1m' },
    });
    try {
      await broker.publishSchedule(
        [...entries.values()].map((e) => ({ name: e.name, definition: e.definition, hash: e.hash })),
      );
      // A live node that runs `live` (it would store the entry again at once).
      await broker.register({
        id: 'n1',
        name: 'n1@test',
        host: 'test',
        pid: process.pid,
        queues: ['default'],
        concurrency: '1',
        startedAt: Date.now(),
        schedule: ['live'],
      });
      const run = (...args: string[]): SpawnSyncReturns<string> =>
        spawnSync(process.execPath, [CLI, 'schedule', 'remove', ...args, '-b', url], { encoding: 'utf8' });
      const r = run('gone', 'live', 'never', '--json');
      expect(r.status).toBe(1);
      expect(JSON.parse(r.stdout)).toEqual({
        removed: 1,
        notStored: ['never'],
        running: [{ entry: 'live', nodes: ['n1@test'] }],
      });
      expect(r.stderr).toBe(
        'error: not removed: schedule entry live runs on n1@test: take it out of their schedule first\n' +
          'error: not in the schedule: never\n',
      );
      expect(await broker.scheduleNames()).toEqual(['live']);
      // The node gone, the entry goes too.
      await broker.unregister('n1');
      expect(run('live')).toMatchObject({ status: 0, stdout: 'removed 1 schedule entry\n', stderr: '' });
      expect(await broker.scheduleNames()).toEqual([]);
    } finally {
      await broker.close();
    }
  });

  it("schedule list shows a cron entry's next run in its own time zone", async () => {
    const url = await emptyRedisDb(DB);
    const broker = createBroker(url, { logger: silent });
    await broker.connect();
    const entry = defineSchedule({
      nightly: { task: 'tick', args: ['n'], cron: '30 2 * * *', tz: 'Europe/Berlin' },
    }).entries.get('nightly')!;
    try {
      await broker.publishSchedule([{ name: 'nightly', definition: entry.definition, hash: entry.hash }]);
    } finally {
      await broker.close();
    }
    const r = spawnSync(process.execPath, [CLI, 'schedule', 'list', '-b', url, '--json'], { encoding: 'utf8' });
    const [listed] = JSON.parse(r.stdout) as { nextRunAt: number; nextRun: string; tz: string; lastTick?: number }[];
    expect(listed).toMatchObject({ tz: 'Europe/Berlin', cron: '30 2 * * *' });
    expect(listed!.lastTick).toBeUndefined();
    // 02:30 as read in Berlin, with Berlin's offset that day (CET or CEST, or the DST jump).
    expect(listed!.nextRun).toMatch(/^\d{4}-\d\d-\d\d (02:30|03:00):00 GMT\+[12]$/);
    expect(listed!.nextRunAt).toBe(entry.rule.next(Date.now() - 1000) ?? 0);
  });
});
