/**
 * A cold shutdown (SIGQUIT) of `prefork worker` ends even when Redis is
 * unreachable: the settlements it cannot write are left reserved (their jobs
 * come back when the node's lease expires) and the process exits 1 after
 * 10 s, saying so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startRedisServer } from '../../scripts/redis.mjs';
import { cleanup, fixture, makeClient, newLedger, readLedger, spawnCliWorker } from '../helpers/worker.js';
import { waitUntil } from '../helpers/wait.js';

afterEach(cleanup);

describe('prefork worker: cold shutdown with Redis unreachable', { timeout: 120_000 }, () => {
  it('exits 1 after the 10 s cold-exit timer, naming what it could not settle', async () => {
    const server = await startRedisServer();
    const ledger = newLedger();
    const worker = spawnCliWorker(['--app', fixture('worker-tasks.mjs'), '--broker', server.url, '-c', '1'], {
      env: { PREFORK_TEST_LEDGER: ledger },
    });
    try {
      await worker.ready;
      await makeClient(server.url).enqueue('record', [600_000]);
      await waitUntil(() => readLedger(ledger).length === 1, 'the long job runs');
      await server.stop();
      expect(await worker.stop('SIGQUIT')).toEqual({ code: 1, signal: null });
      const last = JSON.parse(worker.output().trim().split('\n').at(-1) ?? '{}') as {
        msg?: string;
        unacked?: number;
      };
      expect(last).toMatchObject({ unacked: 1, msg: 'cold shutdown did not finish within 10000 ms; exiting' });
    } finally {
      // cleanup() kills the worker if the test failed before it exited, then the server can go.
      await cleanup();
      await server.stop();
    }
  });
});
