/**
 * `prefork result <id>` of a workflow shows its tree with each member's
 * state, as text and as JSON (what `handle.state()` gives); `prefork dead
 * retry` leaves a workflow's dead job dead, saying why.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { chain, chord, task } from 'prefork';
import { cleanup, emptyRedisDb, makeClient, makeWorker } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 42;

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

afterEach(cleanup);

describe('prefork result of a workflow', { timeout: 120_000 }, () => {
  it('prints the tree with each member state, value or error; --json gives the same as handle.state()', async () => {
    const url = await emptyRedisDb(DB);
    await makeWorker({ broker: url }).start();
    const client = makeClient(url);
    const ok = await client.enqueue(chord([task('add', [1, 1]), task('add', [2, 2])], task('sum')));
    expect(await ok.result({ timeout: 30_000 })).toBe(6);
    const shown = run(['result', ok.id, '--broker', url]);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.trim().split('\n');
    expect(lines.slice(0, 4)).toEqual([`workflow: ${ok.id}`, 'state:    SUCCESS', 'value:    6', 'chord  SUCCESS']);
    expect(lines[4]).toBe('├─ group  SUCCESS');
    expect(lines[5]).toMatch(/^│ {2}├─ add {2}SUCCESS {2}\S+ {2}→ 2$/);
    expect(lines[6]).toMatch(/^│ {2}└─ add {2}SUCCESS {2}\S+ {2}→ 4$/);
    expect(lines[7]).toMatch(/^└─ sum {2}SUCCESS {2}\S+ {2}→ 6$/);
    expect(JSON.parse(run(['result', ok.id, '--json', '--broker', url]).stdout)).toEqual(
      JSON.parse(JSON.stringify(await ok.state())),
    );

    const failed = await client.enqueue(chain(task('boom', [1]), task('double')));
    await expect(failed.result({ timeout: 30_000 })).rejects.toThrow('boom 1');
    const text = run(['result', failed.id, '--broker', url]).stdout;
    expect(text).toMatch(/^state: +FAILURE$/m);
    expect(text).toMatch(/^failed: +boom \(job \S+\): Error: boom 1$/m);
    expect(text).toMatch(/^├─ boom {2}FAILURE {2}\S+ {2}Error: boom 1$/m);
    expect(text).toMatch(/^└─ double {2}SKIPPED {2}\S+$/m);
  });

  it('revoke of a waiting member says which workflow it is a step of, and that it fails there', async () => {
    const url = await emptyRedisDb(DB);
    const client = makeClient(url);
    // No node runs: the members wait in their queue.
    const flow = await client.enqueue(chord([task('add', [1, 1]), task('add', [2, 2])], task('sum')));
    const member = (await flow.state())?.tree.children?.[0]?.children?.[0]?.id as string;
    const revoked = run(['revoke', member, '--broker', url]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toBe(
      `${member}: revoked, taken out of its queue; a step of workflow ${flow.id}, which records it as failed (the steps after it never run)\n`,
    );
    expect(run(['revoke', member, '--broker', url]).stdout).toBe(`${member}: revoked already\n`);
  });

  it('revoke of a workflow id revokes every job of it that had not ended, the callback not started included', async () => {
    const url = await emptyRedisDb(DB);
    const client = makeClient(url);
    const flow = await client.enqueue(chord([task('add', [1, 1]), task('add', [2, 2])], task('sum')));
    const revoked = run(['revoke', flow.id, '--broker', url]);
    expect(revoked).toMatchObject({ code: 0, stderr: '' });
    expect(revoked.stdout).toBe(
      `${flow.id}: workflow revoked: 3 of its jobs that had not ended (none of them starts from now on)\n`,
    );
    const json = run(['revoke', flow.id, '--json', '--broker', url]);
    expect(JSON.parse(json.stdout)).toEqual([{ id: flow.id, outcome: 'finished', state: 'FAILURE' }]);
    expect(run(['revoke', flow.id, '--broker', url]).stdout).toBe(
      `${flow.id}: already finished (FAILURE), nothing to revoke\n`,
    );
  });

  it("dead retry refuses a workflow's dead job, naming it and its workflow; --all leaves it with a warning", async () => {
    const url = await emptyRedisDb(DB);
    await makeWorker({ broker: url }).start();
    const client = makeClient(url);
    const flow = await client.enqueue(chain(task('boom', [1]), task('double')));
    await expect(flow.result({ timeout: 30_000 })).rejects.toThrow('boom 1');
    const step = (await flow.state())?.tree.children?.[0]?.id as string;
    const lone = await client.enqueue('boom', [2]);
    await expect(lone.result({ timeout: 30_000 })).rejects.toThrow('boom 2');

    const refused = run(['dead', 'retry', step, '--broker', url]);
    expect(refused).toMatchObject({ code: 1, stdout: 'requeued 0 dead job(s)\n' });
    expect(refused.stderr).toBe(
      `error: not retried: job ${step} is a step of workflow ${flow.id}, which recorded its failure when it died: ` +
        'a rerun would belong to no workflow (enqueue the workflow again instead)\n',
    );
    const all = run(['dead', 'retry', '--all', '--json', '--broker', url]);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({ requeued: 1, notDead: [], inWorkflow: [{ id: step, workflow: flow.id }] });
    expect(all.stderr).toMatch(new RegExp(`^warning: left dead: job ${step} is a step of workflow ${flow.id}, `));
    const listed = JSON.parse(run(['dead', 'list', '--json', '--broker', url]).stdout) as { id: string }[];
    expect(listed.map((d) => d.id)).toContain(step);
  });
});
