/**
 * `prefork result` says where a job is, against a real Redis (a database of
 * this file's own): waiting in its queue, delayed until its due time, retrying
 * (which attempt failed, when the next is due), reserved by a node, and
 * unknown, as text and as JSON. Never a bare PENDING for all of them.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, emptyRedisDb, makeClient, makeWorker, newLedger, readLedger, uniqueName } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 24;
const HOUR = 3_600_000;
let url = '';

beforeEach(async () => {
  url = await emptyRedisDb(DB);
});
afterEach(cleanup);

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--broker', url], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json(id: string): Record<string, unknown> {
  const r = run(['result', id, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('prefork result tells where a job is', { timeout: 120_000 }, () => {
  it('waiting in its queue, delayed until its due time, and unknown', () => {
    const waiting = run(['enqueue', 'add', '1', '2', '--queue', 'nobody']).stdout.trim();
    const shown = run(['result', waiting]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^state: +PENDING \(waiting in queue nobody\)$/m);
    expect(json(waiting)).toMatchObject({ id: waiting, state: 'PENDING', queue: 'nobody', task: 'add' });

    const before = Date.now();
    const delayed = run(['enqueue', 'add', '1', '2', '--delay', '1h']).stdout.trim();
    const record = json(delayed);
    expect(record).toMatchObject({ state: 'PENDING', queue: 'default' });
    const dueAt = record.dueAt as number;
    expect(dueAt).toBeGreaterThanOrEqual(before + HOUR - 60_000);
    expect(dueAt).toBeLessThanOrEqual(Date.now() + HOUR + 60_000);
    expect(run(['result', delayed]).stdout).toContain(
      `state:    PENDING (delayed until ${new Date(dueAt).toISOString()})`,
    );

    const unknown = run(['result', 'no-such-job']);
    expect(unknown.code).toBe(0);
    expect(unknown.stdout).toMatch(/^state: +PENDING \(unknown: /m);
    expect(json('no-such-job')).toEqual({ id: 'no-such-job', state: 'PENDING', unknown: true });
  });

  it('retrying: which attempt failed and when the next is due', async () => {
    await makeWorker({ broker: url }).start();
    const id = run([
      'enqueue',
      'flaky',
      JSON.stringify(uniqueName('k')),
      '99',
      '--retries',
      '2',
      '--backoff',
      'fixed:1h',
    ]).stdout.trim();
    await expect.poll(() => json(id).state, { timeout: 60_000 }).toBe('RETRY');
    const record = json(id);
    expect(record).toMatchObject({ state: 'RETRY', retries: 0, error: { message: 'flaky attempt 1' } });
    const dueAt = record.dueAt as number;
    expect(run(['result', id]).stdout).toContain(
      `state:    RETRY (attempt 1 failed; attempt 2 due at ${new Date(dueAt).toISOString()})`,
    );
  });

  it('reserved by a node that does not track starts: RECEIVED, naming the node', async () => {
    const ledger = newLedger();
    await makeWorker({ broker: url, ledger, name: 'node-r' }).start();
    const job = await makeClient(url).enqueue('record', [60_000]);
    await expect.poll(() => readLedger(ledger).length, { message: 'the job started', timeout: 60_000 }).toBe(1);
    const shown = run(['result', job.id]).stdout;
    expect(shown).toMatch(/^state: +RECEIVED \(held by a node: buffered or running; it does not track starts\)$/m);
    expect(shown).toMatch(/^node: +node-r/m);
    expect(json(job.id)).toMatchObject({ id: job.id, state: 'RECEIVED', node: 'node-r' });
  });
});
