/**
 * What `prefork worker` logs as people follow it: one line per job event
 * (received, succeeded / failed / retry) with the task, the job id and the
 * child pid; a failure with the task's own stack only; a Retry without a
 * stack; a time limit once; `inspect stats` requests only at debug.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { emptyRedisDb, fixture, newLedger, cleanup } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const DB = 10;

type Line = Record<string, unknown> & { level: number; msg: string };

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface RunningWorker {
  proc: ChildProcess;
  out: () => string;
  lines: () => Line[];
  exited: Promise<{ code: number | null; signal: string | null }>;
}

const workers: ChildProcess[] = [];
afterEach(async () => {
  for (const w of workers.splice(0)) if (w.exitCode === null) w.kill('SIGKILL');
  await cleanup();
});

async function startWorker(url: string, queue: string, extra: string[] = []): Promise<RunningWorker> {
  const proc = spawn(
    process.execPath,
    [CLI, 'worker', '--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '1', '-Q', queue, ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PREFORK_TEST_LEDGER: newLedger() } },
  );
  workers.push(proc);
  let out = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines = (): Line[] =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
  await expect.poll(() => out, { timeout: 30_000 }).toMatch(/^tasks \(\d+\): .*\n/m);
  return { proc, out: () => out, lines, exited };
}

function enqueueAndWait(url: string, queue: string, task: string, ...args: string[]): string {
  const r = run(['enqueue', task, ...args, '--queue', queue, '--wait', '--timeout', '20s', '--json', '--broker', url]);
  return (JSON.parse(r.stdout) as { id: string }).id;
}

describe('prefork worker: the per-job log lines', { timeout: 120_000 }, () => {
  let url = '';
  beforeAll(async () => {
    url = await emptyRedisDb(DB);
  });

  it('received and succeeded, failed with the task stack, retry without one, a time limit once, stats quiet', async () => {
    const w = await startWorker(url, 'log1');
    const tasks = /^tasks \((\d+)\): (.*)$/m.exec(w.out())!;
    const names = tasks[2]!.split(', ');
    expect(names).toEqual([...names].sort());
    expect(names).toHaveLength(Number(tasks[1]));
    expect(names).toEqual(expect.arrayContaining(['add', 'flaky', 'retryMe', 'slowWithLimit']));
    const ofJob = (id: string): Line[] => w.lines().filter((l) => l.jobId === id);

    const ok = enqueueAndWait(url, 'log1', 'add', '2', '3');
    await expect.poll(() => ofJob(ok).length).toBe(2);
    const [received, succeeded] = ofJob(ok) as [Line, Line];
    expect(received).toMatchObject({ level: 30, task: 'add', jobId: ok, queue: 'log1', msg: `add[${ok}] received` });
    expect(succeeded).toMatchObject({ level: 30, task: 'add', jobId: ok });
    expect(succeeded.childPid).toEqual(expect.any(Number));
    expect(succeeded.msg).toMatch(
      new RegExp(`^add\\[${ok}\\] succeeded in \\d+ ms \\(pid ${String(succeeded.childPid)}\\)$`),
    );

    const failed = enqueueAndWait(url, 'log1', 'flaky', '"k1"', '5');
    await expect.poll(() => ofJob(failed).length).toBe(2);
    const failure = ofJob(failed)[1]!;
    expect(failure).toMatchObject({ level: 50, task: 'flaky' });
    expect(failure.childPid).toEqual(expect.any(Number));
    expect(failure.msg).toMatch(/failed in \d+ ms \(pid \d+\): Error: flaky attempt 1$/);
    const err = failure.err as { type: string; stack: string };
    expect(err.type).toBe('Error');
    expect(err.stack).toContain('worker-tasks.mjs');
    expect(err.stack).not.toContain(DIST);
    expect(err.stack).not.toContain('node:');

    const retried = enqueueAndWait(url, 'log1', 'retryMe', '"k2"', '2');
    await expect
      .poll(() => ofJob(retried).map((l) => l.msg.replace(`[${retried}]`, '[id]').replace(/\d+ ms \(pid \d+\)/, 'T')))
      .toEqual([
        'retryMe[id] received',
        'retryMe[id] retry in 10 ms (attempt 2): retry requested',
        'retryMe[id] received',
        'retryMe[id] succeeded in T',
      ]);
    expect(ofJob(retried)[1]).not.toHaveProperty('err');

    const limited = enqueueAndWait(url, 'log1', 'slowWithLimit');
    await expect.poll(() => ofJob(limited).length).toBe(2);
    const warnings = w.lines().filter((l) => l.level >= 40 && (l.jobId === limited || String(l.msg).includes(limited)));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/failed in \d+ ms \(pid \d+\): TimeLimitExceeded/);
    // Nothing else warned: not the child the time limit killed, not the Retry, not a success.
    expect(w.lines().filter((l) => l.level >= 40)).toEqual([failure, warnings[0]]);

    expect(run(['inspect', 'stats', '--broker', url]).code).toBe(0);
    expect(run(['control', 'ping', '--broker', url]).code).toBe(0);
    expect(w.lines().filter((l) => /^control: (stats|ping)/.test(l.msg))).toEqual([]);

    w.proc.kill('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
  });

  it('a failure with a huge message: the line keeps its first 1,024 characters and says where the whole is', async () => {
    const w = await startWorker(url, 'log4');
    const huge = 'y'.repeat(100_000);
    const failed = enqueueAndWait(url, 'log4', 'boom', JSON.stringify(huge));
    await expect.poll(() => w.lines().filter((l) => l.jobId === failed).length).toBe(2);
    const raw = w
      .out()
      .split('\n')
      .find((l) => l.includes(`"jobId":"${failed}"`) && l.includes('"level":50'));
    const marker = `… [message cut: 100005 characters; whole in the job's result: prefork result ${failed}]`;
    const kept = `boom ${'y'.repeat(1024 - 5)}${marker}`;
    const line = JSON.parse(raw!) as Line & { err: { message: string; stack: string } };
    expect(line.msg).toMatch(new RegExp(`failed in \\d+ ms \\(pid \\d+\\): Error: `));
    expect(line.msg.endsWith(`Error: ${kept}`)).toBe(true);
    expect(line.err.message).toBe(kept);
    expect(line.err.stack.startsWith(`Error: ${kept}\n`)).toBe(true);
    expect(line.err.stack).toContain('worker-tasks.mjs');
    // Cut three times over (message, error, stack), the line is a few KB, not 300.
    expect(raw!.length).toBeLessThan(20_000);
    // The stored result keeps it whole.
    const shown = run(['result', failed, '--json', '--broker', url]);
    expect(shown.stdout).toContain(`boom ${huge}`);
    w.proc.kill('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
  });

  it("a failure's huge fields and cause are cut in the line; with results ignored the message points to the dead set", async () => {
    const w = await startWorker(url, 'log5');
    const huge = 'y'.repeat(100_000);
    const enqueued = run([
      'enqueue',
      'boomWith',
      JSON.stringify(huge),
      '100000',
      '--ignore-result',
      '--queue',
      'log5',
      '--json',
      '--broker',
      url,
    ]);
    const ignored = (JSON.parse(enqueued.stdout) as { id: string }).id;
    const stored = enqueueAndWait(url, 'log5', 'boomWith', '"small"', '100000');
    type Failure = Line & { err: Record<string, string> & { cause: { message: string } } };
    const failure = (id: string): Failure | undefined =>
      w.lines().find((l) => l.jobId === id && l.level === 50) as Failure | undefined;
    await expect.poll(() => failure(ignored) !== undefined && failure(stored) !== undefined).toBe(true);
    const lost = failure(ignored)!;
    // No result is stored: the message is whole in the dead set's reason, the fields nowhere.
    expect(
      lost.msg.endsWith("… [message cut: 100000 characters; whole in the dead set's reason: prefork dead list --json]"),
    ).toBe(true);
    expect(lost.err.data).toMatch(/^\[field cut: \d+ bytes\]$/);
    expect(lost.err.code).toBe('E_BOOM');
    expect(lost.err.cause.message).toBe(`${'c'.repeat(1024)}… [message cut: 100000 characters]`);
    const kept = failure(stored)!;
    expect(kept.err.data).toMatch(
      new RegExp(`^\\[field cut: \\d+ bytes; whole in the job's result: prefork result ${stored}\\]$`),
    );
    expect(kept.err.code).toBe('E_BOOM');
    expect(kept.err.cause.message).toBe(
      `${'c'.repeat(1024)}… [message cut: 100000 characters; whole in the job's result: prefork result ${stored}]`,
    );
    // Cut everywhere (message, fields, cause), each line is a few KB.
    const raw = w
      .out()
      .split('\n')
      .filter((l) => l.includes(`"jobId":"${stored}"`) && l.includes('"level":50'));
    expect(raw.map((l) => l.length < 20_000)).toEqual([true]);
    expect(run(['result', stored, '--json', '--broker', url]).stdout).toContain('d'.repeat(100_000));
    const dead = run(['dead', 'list', '--queue', 'log5', '--json', '--broker', url]);
    expect((JSON.parse(dead.stdout) as { id: string; reason: string }[]).find((d) => d.id === ignored)?.reason).toBe(
      huge,
    );
    w.proc.kill('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
  });

  it('--job-log-level debug keeps the job lines out of an info log; failures still show', async () => {
    const w = await startWorker(url, 'log2', ['--job-log-level', 'debug']);
    const ok = enqueueAndWait(url, 'log2', 'add', '1', '1');
    const failed = enqueueAndWait(url, 'log2', 'flaky', '"k3"', '5');
    await expect.poll(() => w.lines().filter((l) => l.jobId === failed).length).toBe(1);
    expect(w.lines().filter((l) => l.jobId === ok)).toEqual([]);
    expect(w.lines().find((l) => l.jobId === failed)).toMatchObject({ level: 50, task: 'flaky' });
    w.proc.kill('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
  });

  it('--log-level debug shows the stats and ping requests, at debug; one that changes the node logs at info', async () => {
    const w = await startWorker(url, 'log3', ['--log-level', 'debug']);
    for (const args of [
      ['inspect', 'stats'],
      ['control', 'ping'],
      ['control', 'grow', '1'],
    ])
      expect(run([...args, '--broker', url]).code, args.join(' ')).toBe(0);
    await expect
      .poll(() =>
        w
          .lines()
          .filter((l) => l.msg.startsWith('control: '))
          .map((l) => [l.msg, l.level]),
      )
      .toEqual([
        ['control: stats', 20],
        ['control: ping', 20],
        ['control: grow', 30],
      ]);
    w.proc.kill('SIGTERM');
    expect(await w.exited).toEqual({ code: 0, signal: null });
  });
});
