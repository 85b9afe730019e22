/**
 * A reader that went away (`prefork worker | head -3`, a log collector that
 * died) leaves the process writing to a closed pipe (EPIPE). That must never
 * wedge it: logging stops, the work and the shutdown go on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../helpers/wait.js';
import { createBroker } from 'prefork/broker';
import { cleanup, emptyRedisDb, fixture, makeClient, silent } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 12;

const procs: ChildProcess[] = [];
afterEach(async () => {
  for (const proc of procs.splice(0)) if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  await cleanup();
});

function exitOf(proc: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  procs.push(proc);
  return new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
}

// A worker node's start, a job and a warm stop: on a loaded machine that takes a while.
describe('output to a reader that went away (EPIPE)', { timeout: 120_000 }, () => {
  it.each(['stdout', 'stderr'] as const)(
    'the CLI logger on %s: lines logged right before process.exit() do not hang the exit',
    async (stream) => {
      // Asynchronous pino retried the queued lines for ever at exit (sonic-boom's flushSync on EPIPE).
      const proc = spawn(process.execPath, [fixture('log-then-exit.mjs'), stream], { stdio: ['pipe', 'pipe', 'pipe'] });
      const exited = exitOf(proc);
      (stream === 'stdout' ? proc.stdout : proc.stderr).destroy();
      proc.stdin.write('go\n');
      expect(await exited).toEqual({ code: 0, signal: null });
    },
  );

  it('prefork worker with its stdout closed from the start works, and SIGTERM stops it with exit 0', async () => {
    const url = await emptyRedisDb(DB);
    const proc = spawn(
      process.execPath,
      [CLI, 'worker', '--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '1'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PREFORK_TEST_LEDGER: '/dev/null' },
      },
    );
    const exited = exitOf(proc);
    // Read, so a full stderr pipe can never block the node (its children write there too); shown on failure.
    let stderr = '';
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    proc.stdout.destroy();
    const broker = createBroker(url, { logger: silent });
    await broker.connect();
    try {
      await waitUntil(
        async () => proc.exitCode !== null || (await broker.listNodes()).length === 1,
        'the worker registered (or exited)',
      );
      expect(proc.exitCode).toBeNull();
    } finally {
      await broker.close();
    }
    const job = await makeClient(url).enqueue('add', [1, 2]);
    const value = await job.result({ timeout: '60s' }).catch((err: unknown) => {
      const state = proc.exitCode === null ? 'still runs' : `exited with ${proc.exitCode}`;
      throw new Error(`${String(err)}; the worker ${state}; its stderr: ${stderr || '(empty)'}`);
    });
    expect(value).toBe(3);
    proc.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it('prefork worker --broker memory:// whose reader took three lines and left (| head -3): SIGTERM stops it with exit 0', async () => {
    const proc = spawn(
      process.execPath,
      [CLI, 'worker', '--app', fixture('worker-tasks.mjs'), '--broker', 'memory://', '-c', '1'],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PREFORK_TEST_LEDGER: '/dev/null' } },
    );
    const exited = exitOf(proc);
    // As `head -3` does: read three lines, then close the pipe; what the node writes after that fails with EPIPE.
    const lines = createInterface({ input: proc.stdout });
    const read: string[] = [];
    await new Promise<void>((resolve) =>
      lines.on('line', (line) => {
        if (read.push(line) === 3) resolve();
      }),
    );
    lines.close();
    proc.stdout.destroy();
    expect(read[0]).toMatch(/^prefork worker .* broker memory:\/\//);
    proc.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
  });
});
