/**
 * `prefork events`: the last events as readable lines or NDJSON, filtered
 * by task, node and type; `--follow` prints new ones as they come and ends
 * on Ctrl-C with exit 0; a bad type is a usage error (exit 2).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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

  it('refuses an unknown event type with exit 2 naming the flag', () => {
    const r = run(['events', '--type', 'job-done', '--broker', url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--type.*job-done.*expected event types among job-received/);
  });
});
