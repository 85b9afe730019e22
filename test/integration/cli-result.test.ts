/**
 * `prefork result` of a job that is running says so: on a node started with
 * `--track-started` the record is STARTED, shown as running with its node and
 * pid, never as PENDING.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WAIT } from '../helpers/wait.js';
import { cleanup, emptyRedisDb, fixture, newLedger } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 6;

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('prefork result of a running job', { timeout: 120_000 }, () => {
  let url = '';
  let worker: ChildProcess | undefined;
  beforeAll(async () => {
    url = await emptyRedisDb(DB);
    worker = spawn(
      process.execPath,
      [CLI, 'worker', '--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '1', '--track-started'],
      { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PREFORK_TEST_LEDGER: newLedger() } },
    );
    let out = '';
    worker.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    await vi.waitFor(() => expect(out, 'the worker is ready').toContain('worker ready'), WAIT);
  });
  afterAll(async () => {
    if (worker?.exitCode === null) worker.kill('SIGKILL');
    await cleanup();
  });

  it('says STARTED (running), with the node and the pid, as text and as JSON', async () => {
    const id = run(['enqueue', 'record', '60000', '--broker', url]).stdout.trim();
    await expect
      .poll(() => run(['result', id, '--broker', url]).stdout, { timeout: 30_000 })
      .toMatch(/^state: +STARTED \(running\)$/m);
    const shown = run(['result', id, '--broker', url]).stdout;
    expect(shown).not.toContain('PENDING');
    expect(shown).toMatch(/^node: +\S+ \(pid \d+\)$/m);
    expect(JSON.parse(run(['result', id, '--json', '--broker', url]).stdout)).toMatchObject({
      id,
      state: 'STARTED',
      pid: expect.any(Number) as number,
    });
  });
});
