/**
 * `prefork result` of a job that is running says so: on a node started with
 * `--track-started` the record is STARTED, shown as running with its node and
 * pid, never as PENDING.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, emptyRedisDb, fixture, newLedger, spawnCliWorker } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 6;

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('prefork result of a running job', { timeout: 120_000 }, () => {
  let url = '';
  beforeAll(async () => {
    url = await emptyRedisDb(DB);
    await spawnCliWorker(['--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '1', '--track-started'], {
      env: { PREFORK_TEST_LEDGER: newLedger() },
    }).ready;
  });
  afterAll(cleanup);

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

  it('finds a job whose id is white space, as the library enqueued it (the same rule: a non-empty id)', () => {
    const enqueued = run(['enqueue', 'record', '1', '--id', ' ', '--broker', url]);
    expect(enqueued.code).toBe(0);
    expect(enqueued.stdout).toBe(' \n');
    const shown = run(['result', ' ', '--json', '--broker', url]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: ' ' });
  });
});
