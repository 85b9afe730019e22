/**
 * A cold shutdown (SIGQUIT) of `prefork worker` ends even when Redis is
 * unreachable: the settlements it cannot write are left reserved (their jobs
 * come back when the node's lease expires) and the process exits 1 after
 * 10 s, saying so.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedisServer } from '../../scripts/redis.mjs';
import { cleanup, fixture, makeClient, newLedger, readLedger } from '../helpers/worker.js';
import { waitUntil } from '../helpers/wait.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

afterEach(cleanup);

describe('prefork worker: cold shutdown with Redis unreachable', { timeout: 120_000 }, () => {
  it('exits 1 after the 10 s cold-exit timer, naming what it could not settle', async () => {
    const server = await startRedisServer();
    const ledger = newLedger();
    const proc = spawn(
      process.execPath,
      [CLI, 'worker', '--app', fixture('worker-tasks.mjs'), '--broker', server.url, '-c', '1'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PREFORK_TEST_LEDGER: ledger },
      },
    );
    try {
      let out = '';
      proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
      proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        proc.once('exit', (code, signal) => resolve({ code, signal })),
      );
      await waitUntil(() => out.includes('worker ready'), 'the worker is ready');
      await makeClient(server.url).enqueue('record', [600_000]);
      await waitUntil(() => readLedger(ledger).length === 1, 'the long job runs');
      await server.stop();
      proc.kill('SIGQUIT');
      expect(await exited).toEqual({ code: 1, signal: null });
      const last = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { msg?: string; unacked?: number };
      expect(last).toMatchObject({ unacked: 1, msg: 'cold shutdown did not finish within 10000 ms; exiting' });
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await cleanup();
      await server.stop();
    }
  });
});
