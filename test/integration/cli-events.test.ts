/**
 * `prefork events`: the last events as readable lines or NDJSON, filtered
 * by task, node and type; `--follow` prints new ones as they come and ends
 * on Ctrl-C with exit 0; a bad type is a usage error (exit 2); an event
 * entry written by something else, with fields of the wrong types, is
 * skipped and the rest printed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Packr } from 'msgpackr';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, emptyRedisDb, fixture } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 41;

let url: string;
const procs: ChildProcess[] = [];

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function start(args: string[]): { proc: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const proc = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(proc);
  let out = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, out: () => out, exited };
}

function enqueueAndWait(task: string, ...args: string[]): string {
  const r = run(['enqueue', task, ...args, '--wait', '--timeout', '20s', '--json', '--broker', url]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { id: string }).id;
}

beforeAll(async () => {
  url = await emptyRedisDb(DB);
});

afterEach(async () => {
  for (const p of procs.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
  await cleanup();
});

describe('prefork events', () => {
  it('prints what nodes did, as lines or NDJSON, filtered; --follow prints new ones until Ctrl-C', async () => {
    const worker = start([
      'worker',
      '--app',
      fixture('worker-tasks.mjs'),
      '--broker',
      url,
      '-c',
      '1',
      '-n',
      'cli-node',
    ]);
    await expect.poll(worker.out, { timeout: 30_000 }).toMatch(/^tasks \(\d+\): /m);
    const id = enqueueAndWait('add', '2', '3');

    // Events ride the node's later writes (at most 250 ms on a quiet node): the result can come first.
    const read = (): { type: string; jobId?: string; node: string }[] => {
      const json = run(['events', '--json', '--broker', url]);
      expect(json.code, json.stderr).toBe(0);
      return json.stdout
        .trim()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { type: string; jobId?: string; node: string });
    };
    await expect
      .poll(() =>
        read()
          .filter((e) => e.jobId === id)
          .map((e) => e.type),
      )
      .toEqual(['job-received', 'job-started', 'job-succeeded']);
    const events = read();
    expect(events.every((e) => e.node === 'cli-node')).toBe(true);

    const text = run(['events', '--task', 'add', '--type', 'job-succeeded', '--broker', url]);
    expect(text.stdout.trim().split('\n')).toHaveLength(1);
    expect(text.stdout).toMatch(new RegExp(`^\\S+Z cli-node job-succeeded add\\[${id}\\]: in \\d+ ms, pid \\d+\\n$`));
    expect(run(['events', '--node', 'elsewhere', '--broker', url]).stdout).toBe('');

    const follow = start([
      'events',
      '--follow',
      '--json',
      '--last',
      '1000',
      '--type',
      'job-succeeded',
      '--broker',
      url,
    ]);
    // The past first; then a new job's outcome, as it happens.
    await expect.poll(follow.out, { timeout: 20_000 }).toContain(id);
    const later = enqueueAndWait('add', '1', '1');
    await expect.poll(follow.out, { timeout: 20_000 }).toContain(later);
    expect(follow.out().trim().split('\n')).toHaveLength(2);
    follow.proc.kill('SIGINT');
    expect(await follow.exited).toBe(0);
  });

  it('skips events whose fields have the wrong types (written by something else) and prints the rest, also with --follow', async () => {
    const packr = new Packr({ useRecords: false, moreTypes: false });
    const raw = new Redis(url);
    const write = async (events: unknown): Promise<void> => {
      await raw.xadd('{prefork}:events', '*', 'e', packr.pack(events));
    };
    const now = Date.now();
    const garbage = [
      {
        type: 'job-succeeded',
        at: now,
        node: 'evil',
        jobId: 5,
        task: { a: 1 },
        queue: 'q',
        attempt: 0,
        runtimeMs: 'abc',
      },
      { type: 'job-failed', at: now, node: 'evil', jobId: null, task: null, queue: 'q', attempt: 0, error: 5 },
      {
        type: 'job-failed',
        at: now,
        node: 'evil',
        jobId: 'j1',
        task: 't',
        queue: 'q',
        attempt: 0,
        error: { name: {}, message: [] },
      },
      { type: 'process-down', at: now, node: 'evil', pid: {}, signal: [], exitCode: 'x', reason: 7 },
      {
        type: 'job-retried',
        at: now,
        node: 'evil',
        jobId: 'j2',
        task: 't',
        queue: 'q',
        attempt: 0,
        retryAt: 'soon',
        error: null,
      },
      { type: 'job-deferred', at: now, node: 'evil', jobId: 'j3', task: 't', queue: 'q', attempt: 0, dueAt: {} },
      { type: 'scale-up', at: now, node: 'evil', from: 'a', to: {} },
      { type: 'node-online', at: NaN, node: 'evil' },
      {
        type: 'job-lost',
        at: 1e300,
        node: 'evil',
        jobId: 'j5',
        task: 't',
        queue: 'q',
        attempt: 0,
        exitCode: 1,
        signal: null,
      },
    ];
    const good = { type: 'node-online', at: now, node: 'evil' };
    try {
      await write([...garbage, good]);
      await write({ v: 2, node: 'evil', base: NaN, names: ['t', 'q'], items: [[0, 0, 'j6', 0, 1, 0]] });
      await write({ v: 2, node: 'evil', base: now, names: ['t', 'q'], items: [[1, 0, 'j7', 0, 1, undefined, 'pid']] });
      const once = run(['events', '--node', 'evil', '--json', '--broker', url]);
      expect(once.code, once.stderr).toBe(0);
      expect(
        once.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as unknown),
      ).toEqual([good]);
      const text = run(['events', '--node', 'evil', '--broker', url]);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toBe(`${new Date(now).toISOString()} evil node-online\n`);

      const follow = start(['events', '--follow', '--node', 'evil', '--broker', url]);
      // The past printed: it follows from there; the garbage arrives while it does.
      await expect.poll(follow.out, { timeout: 20_000 }).toContain('node-online');
      await write(garbage);
      await write([{ type: 'node-offline', at: now + 1, node: 'evil' }]);
      await expect.poll(follow.out, { timeout: 20_000 }).toContain('node-offline');
      expect(follow.out()).toBe(
        `${new Date(now).toISOString()} evil node-online\n${new Date(now + 1).toISOString()} evil node-offline\n`,
      );
      expect(follow.proc.exitCode).toBeNull();
      follow.proc.kill('SIGINT');
      expect(await follow.exited).toBe(0);
    } finally {
      raw.disconnect();
    }
  });

  it('prints a huge error message cut, saying where the whole is; prefork result prints it whole', async () => {
    const worker = start([
      'worker',
      '--app',
      fixture('worker-tasks.mjs'),
      '--broker',
      url,
      '-c',
      '1',
      '-n',
      'cut-node',
    ]);
    await expect.poll(worker.out, { timeout: 30_000 }).toMatch(/^tasks \(\d+\): /m);
    const huge = 'z'.repeat(100_000);
    const enqueued = run(['enqueue', 'boom', JSON.stringify(huge), '--json', '--broker', url]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const id = (JSON.parse(enqueued.stdout) as { id: string }).id;
    const failedLine = (): string =>
      run(['events', '--node', 'cut-node', '--type', 'job-failed', '--broker', url]).stdout.trim();
    await expect
      .poll(failedLine, { timeout: 20_000 })
      .toContain(`[message cut: 100005 characters; whole in the job's result: prefork result ${id}]`);
    expect(failedLine().length).toBeLessThan(2_000);
    const result = run(['result', id, '--json', '--broker', url]);
    expect(result.stdout).toContain(`boom ${huge}`);
  });

  it('prints each event on one line, however many lines and escapes its error message holds', async () => {
    const packr = new Packr({ useRecords: false, moreTypes: false });
    const raw = new Redis(url);
    const now = Date.now();
    // A task's error message quoting what it was given: a line break, and a
    // forged event line after it; a terminal escape that clears the screen.
    const forged = `${new Date(now).toISOString()} lines job-succeeded t[forged]`;
    const failed = {
      type: 'job-failed',
      at: now,
      node: 'lines',
      jobId: 'j1',
      task: 't',
      queue: 'q',
      attempt: 0,
      error: { name: 'Error', message: `bad input\n${forged}\u001b[2J\r` },
    };
    try {
      await raw.xadd('{prefork}:events', '*', 'e', packr.pack([failed]));
      const text = run(['events', '--node', 'lines', '--broker', url]);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout.split('\n')).toHaveLength(2);
      // eslint-disable-next-line no-control-regex -- no control character but the line's end
      expect(text.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
      expect(text.stdout).toContain('bad input\\n');
      // JSON keeps the message as it was.
      const json = run(['events', '--node', 'lines', '--json', '--broker', url]);
      expect(JSON.parse(json.stdout)).toEqual(failed);
    } finally {
      raw.disconnect();
    }
  });

  it('prints a progress value that JSON lacks (a BigInt, bytes) with --json, as prefork result does', async () => {
    const packr = new Packr({ useRecords: false, moreTypes: false, useBigIntExtension: true });
    const raw = new Redis(url);
    const at = Date.now();
    const event = (jobId: string, progress: unknown) => ({
      type: 'job-progress',
      at,
      node: 'values',
      jobId,
      task: 't',
      queue: 'q',
      progress,
    });
    try {
      const events = [event('small', 5n), event('big', 2n ** 70n), event('bytes', Buffer.from('hi'))];
      await raw.xadd('{prefork}:events', '*', 'e', packr.pack(events));
      const once = run(['events', '--node', 'values', '--json', '--broker', url]);
      expect(once.code, once.stderr).toBe(0);
      const printed = once.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { jobId: string; progress: unknown });
      expect(printed.map((e) => [e.jobId, e.progress])).toEqual([
        ['small', '5'],
        ['big', '1180591620717411303424'],
        ['bytes', 'aGk='],
      ]);
    } finally {
      raw.disconnect();
    }
  });

  it('refuses an unknown event type with exit 2 naming the flag', () => {
    const r = run(['events', '--type', 'job-done', '--broker', url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--type.*job-done.*expected event types among job-received/);
  });
});
