/**
 * `prefork revoke` and `prefork inspect revoked` against a real worker node:
 * a revoked job never runs and reads REVOKED, an unknown id exits 1 naming
 * it, a finished job is said to be finished (exit 0), and the revoked ids
 * are listed with when they were revoked and until when they are remembered.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, emptyRedisDb, fixture, newLedger, spawnCliWorker } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 20;

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('prefork revoke', { timeout: 120_000 }, () => {
  let url = '';
  let ledger = '';
  const ran = (): string[] => {
    try {
      return readFileSync(ledger, 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };
  beforeAll(async () => {
    url = await emptyRedisDb(DB);
    ledger = newLedger();
    await spawnCliWorker(['--app', fixture('tasks-revoke.mjs'), '--broker', url, '-c', '1', '-O', 'fair'], {
      env: { PREFORK_TEST_LEDGER: ledger },
    }).ready;
  });
  afterAll(cleanup);

  it('a waiting job is revoked: taken out of its queue, it never runs, and result says REVOKED', async () => {
    const busy = run(['enqueue', 'stubborn', '600000', '--broker', url]).stdout.trim();
    await expect.poll(() => ran().length, { timeout: 30_000 }).toBe(1);
    // A queue no node consumes: the job waits there, in nobody's hands.
    const waiting = run(['enqueue', 'record', '--queue', 'parked', '--broker', url]).stdout.trim();
    const r = run(['revoke', waiting, '--broker', url]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(`${waiting}: revoked, taken out of its queue\n`);
    expect(run(['result', waiting, '--broker', url]).stdout).toMatch(/^state: +REVOKED$/m);
    expect(run(['result', waiting, '--broker', url]).stdout).toMatch(/^error: +RevokedError: job \S+ was revoked$/m);

    // Terminated: the stubborn job's child is killed after the grace period, and the job reads REVOKED.
    const t = run(['revoke', busy, '--terminate', '--grace', '200ms', '--json', '--broker', url]);
    expect(t.code).toBe(0);
    expect(JSON.parse(t.stdout)).toEqual([{ id: busy, outcome: 'revoked' }]);
    await expect
      .poll(() => run(['result', busy, '--json', '--broker', url]).stdout, { timeout: 30_000 })
      .toMatch(/"state":"REVOKED".*"node"/);
    expect(ran().map((line) => line.split(' ')[0])).toEqual([busy]);

    const listed = run(['inspect', 'revoked', '--json', '--broker', url]);
    expect(listed.code).toBe(0);
    const entries = JSON.parse(listed.stdout) as { id: string; revokedAt: number; expiresAt: number }[];
    expect(entries.map((e) => e.id).sort()).toEqual([busy, waiting].sort());
    for (const e of entries) expect(e.expiresAt - e.revokedAt).toBe(86_400_000);
    expect(run(['inspect', 'revoked', '--broker', url]).stdout).toMatch(
      new RegExp(`^${waiting} +\\d{4}-\\d\\d-\\d\\dT\\S+ +\\d{4}-\\d\\d-\\d\\dT\\S+$`, 'm'),
    );
  });

  it('an unknown id exits 1 naming it; a finished job is said to be finished and kept as it was', async () => {
    const done = run(['enqueue', 'record', '--wait', '--broker', url]);
    expect(done.code).toBe(0);
    const id = JSON.parse(run(['enqueue', 'record', '--json', '--broker', url]).stdout) as { id: string };
    await expect
      .poll(() => run(['result', id.id, '--broker', url]).stdout, { timeout: 30_000 })
      .toMatch(/^state: +SUCCESS$/m);
    const r = run(['revoke', id.id, 'no-such-job', '--broker', url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`${id.id}: already finished (SUCCESS), nothing to revoke\n`);
    expect(r.stderr).toBe('error: no-such-job: unknown job id\n');
    expect(run(['result', id.id, '--broker', url]).stdout).toMatch(/^state: +SUCCESS$/m);
  });

  it('a bad --grace exits 2 naming the flag and the value', () => {
    const r = run(['revoke', 'x', '--grace', 'soon', '--broker', url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("option '--grace <duration>' argument 'soon' is invalid");
  });
});
