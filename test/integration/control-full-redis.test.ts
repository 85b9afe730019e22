/**
 * A pause, resume or rate stored while its request to the nodes could not
 * be sent (Redis at maxmemory refuses the request's write, though not the
 * resume's: it only removes): the live nodes follow the stored setting from
 * their next heartbeat once Redis has room, with nobody sending it again.
 * maxmemory is server-wide, so the test has a redis-server of its own.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { makeClient, makeWorker, uniqueName } from '../helpers/worker.js';
import { waitUntil } from '../helpers/wait.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

const own = ownRedisPerTest({ beforeCleanup: (raw) => raw.config('SET', 'maxmemory', '0') });

/** The CLI in its own process, not blocking this one (the worker here must answer it). */
function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr }),
    );
  });
}

describe('settings stored while their requests could not be sent', () => {
  it(
    'a resume Redis stored at maxmemory says so, and reaches the node once Redis has room',
    { timeout: 90_000 },
    async () => {
      const namespace = uniqueName('ns');
      const flags = ['--broker', own.server.url, '--namespace', namespace];
      const worker = makeWorker({ broker: own.server.url, namespace, concurrency: 1, lease: '2s' });
      await worker.start();
      expect((await run(['control', 'pause', 'default', ...flags])).stdout).toMatch(/: OK, paused here: default$/m);
      const job = await makeClient(own.server.url, namespace).enqueue('record', [0]);
      // A beat after the pause's request: the lease carries no flag of a request posted since (sendControl-2.lua).
      await waitUntil(
        async () => Number.isInteger(Number(await own.raw.zscore(`{${namespace}}:nodes`, worker.nodeId))),
        'a heartbeat took the flag of the pause request',
      );

      await own.raw.config('SET', 'maxmemory', '1');
      const resume = await run(['control', 'resume', 'default', ...flags]);
      await own.raw.config('SET', 'maxmemory', '0');
      // The resume is stored; its request to the node was refused, and the command says so.
      expect(resume.code).toBe(1);
      expect(resume.stderr).toMatch(
        /^error: queue 'default' resumed on every node, but asking the nodes failed: OOM .*; the live nodes follow it at their next heartbeat\n$/,
      );
      expect(await own.raw.smembers(`{${namespace}}:paused`)).toEqual([]);

      expect(await job.result({ timeout: 60_000 })).toBe(job.id);
    },
  );
});
