/**
 * `prefork dead retry|delete` and `prefork inspect queues` against a real Redis
 * (a database of this file's own): what a dead job looks like in the queue
 * counts, how retrying puts it back, and $PREFORK_BROKER_URL standing in
 * for --broker.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, emptyRedisDb, makeClient, makeWorker } from '../helpers/worker.js';
import { waitUntil } from '../helpers/wait.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 15;
let url = '';

beforeEach(async () => {
  url = await emptyRedisDb(DB);
});
afterEach(cleanup);

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--broker', url], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The counts of `inspect queues --json`; no queue here is paused (cli-control-pause.test.ts covers that part). */
function queues(): unknown {
  const r = run(['inspect', 'queues', '--json']);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { paused: boolean; pausedOn: string[] }[]).map(({ paused, pausedOn, ...counts }) => {
    expect({ paused, pausedOn }).toEqual({ paused: false, pausedOn: [] });
    return counts;
  });
}

/** Two jobs that die at once (an unknown task), on queues 'a' and 'b'; the worker is stopped after. */
async function twoDeadJobs(): Promise<[string, string]> {
  const worker = makeWorker({ broker: url, queues: 'a,b' });
  await worker.start();
  const client = makeClient(url);
  const ids: string[] = [];
  for (const queue of ['a', 'b']) {
    const job = await client.enqueue('noSuchTask', [], { queue });
    await expect(job.result()).rejects.toMatchObject({ name: 'UnknownTaskError' });
    ids.push(job.id);
  }
  await worker.stop();
  return ids as [string, string];
}

describe('prefork inspect queues and dead retry', { timeout: 120_000 }, () => {
  it('inspect queues counts waiting, reserved, delayed and dead jobs per queue, as JSON and as a table', async () => {
    await twoDeadJobs();
    const client = makeClient(url);
    await client.enqueue('add', [1, 1], { queue: 'a' });
    await client.enqueue('add', [1, 1], { queue: 'a', delay: '1h' });
    const counts = queues() as { queue: string }[];
    expect(counts.sort((x, y) => x.queue.localeCompare(y.queue))).toEqual([
      { queue: 'a', waiting: 1, reserved: 0, delayed: 1, dead: 1 },
      { queue: 'b', waiting: 0, reserved: 0, delayed: 0, dead: 1 },
    ]);
    const table = run(['inspect', 'queues']);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trim().split('\n');
    expect(header?.split(/ +/)).toEqual(['QUEUE', 'WAITING', 'RESERVED', 'DELAYED', 'DEAD', 'PAUSED']);
    expect(rows.map((row) => row.split(/ +/)).sort()).toEqual([
      ['a', '1', '0', '1', '1', '-'],
      ['b', '0', '0', '0', '1', '-'],
    ]);
  });

  it('dead retry <id> puts that job back on its own queue; the other stays dead', async () => {
    const [inA] = await twoDeadJobs();
    const r = run(['dead', 'retry', inA]);
    expect(r).toMatchObject({ code: 0, stdout: 'requeued 1 dead job(s)\n' });
    expect(queues()).toEqual(
      expect.arrayContaining([
        { queue: 'a', waiting: 1, reserved: 0, delayed: 0, dead: 0 },
        { queue: 'b', waiting: 0, reserved: 0, delayed: 0, dead: 1 },
      ]),
    );
    // Retrying an id that is not dead requeues nothing.
    expect(run(['dead', 'retry', inA]).stdout).toBe('requeued 0 dead job(s)\n');
  });

  it('dead retry --all [--queue Q] puts every dead job (of Q) back', async () => {
    await twoDeadJobs();
    expect(run(['dead', 'retry', '--all', '--queue', 'b']).stdout).toBe('requeued 1 dead job(s)\n');
    expect(queues()).toEqual(
      expect.arrayContaining([
        { queue: 'a', waiting: 0, reserved: 0, delayed: 0, dead: 1 },
        { queue: 'b', waiting: 1, reserved: 0, delayed: 0, dead: 0 },
      ]),
    );
    expect(run(['dead', 'retry', '--all']).stdout).toBe('requeued 1 dead job(s)\n');
    expect(JSON.parse(run(['dead', 'list', '--json']).stdout)).toEqual([]);
  });

  it('dead retry <id> leaves a dead job dead while a job with its id waits: named, exit 1', async () => {
    const worker = makeWorker({ broker: url, queues: 'a' });
    await worker.start();
    const client = makeClient(url);
    // Its failure is kept 1 ms: then its own id is free to enqueue again. The
    // result may be gone before a client reads it, so the dead set is watched.
    await client.enqueue('noSuchTask', [], { queue: 'a', id: 'report-1', resultTtl: 1 });
    await waitUntil(() => {
      const dead = JSON.parse(run(['dead', 'list', '--json']).stdout) as { id: string; reason: string }[];
      return dead.some((job) => job.id === 'report-1' && /UnknownTaskError|unknown task/i.test(job.reason));
    }, 'report-1 died of an unknown task');
    await worker.stop();
    // Enqueued again under its id (a duplicate adds nothing until its failure expired).
    await waitUntil(
      async () => !(await client.enqueue('add', [1, 1], { queue: 'a', id: 'report-1' })).duplicate,
      'its id was free again',
    );
    const r = run(['dead', 'retry', 'report-1']);
    expect(r).toMatchObject({ code: 1, stdout: 'requeued 0 dead job(s)\n' });
    expect(r.stderr).toMatch(/^error: not retried: job report-1: a job with this id waits, is delayed or runs/);
    expect(queues()).toEqual([{ queue: 'a', waiting: 1, reserved: 0, delayed: 0, dead: 1 }]);
    const all = run(['dead', 'retry', '--all', '--json']);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({ requeued: 0, notDead: [], inUse: ['report-1'] });
    expect(all.stderr).toMatch(/^warning: left dead: job report-1: /);
  });

  it('dead delete <id> drops that job; an id not dead is named, exit 1', async () => {
    const [inA, inB] = await twoDeadJobs();
    expect(run(['dead', 'delete', inA])).toMatchObject({ code: 0, stdout: 'deleted 1 dead job(s)\n' });
    expect(queues()).toEqual(
      expect.arrayContaining([
        { queue: 'a', waiting: 0, reserved: 0, delayed: 0, dead: 0 },
        { queue: 'b', waiting: 0, reserved: 0, delayed: 0, dead: 1 },
      ]),
    );
    const again = run(['dead', 'delete', inA, '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toEqual({ deleted: 0, notDead: [inA] });
    expect(again.stderr).toBe(`error: not in the dead set: ${inA}\n`);
    expect(run(['dead', 'delete', inB, '--queue', 'a'])).toMatchObject({ code: 1, stdout: 'deleted 0 dead job(s)\n' });
    expect(run(['dead', 'delete', inB])).toMatchObject({ code: 0, stdout: 'deleted 1 dead job(s)\n' });
  });

  it('without --broker, the commands use $PREFORK_BROKER_URL', async () => {
    const [inA] = await twoDeadJobs();
    const env = { ...process.env, PREFORK_BROKER_URL: url };
    const fromEnv = (args: string[]): { code: number | null; stdout: string } => {
      const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, env });
      return { code: r.status, stdout: r.stdout };
    };
    expect(fromEnv(['dead', 'retry', inA])).toEqual({ code: 0, stdout: 'requeued 1 dead job(s)\n' });
    const listed = fromEnv(['inspect', 'queues', '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual(JSON.parse(run(['inspect', 'queues', '--json']).stdout));
    expect(queues()).toEqual(expect.arrayContaining([{ queue: 'a', waiting: 1, reserved: 0, delayed: 0, dead: 0 }]));
  });

  it.each([[[]], [['--all', 'some-id']]])('dead retry %j is a one-line usage error, exit 2', (args) => {
    const r = run(['dead', 'retry', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: dead retry: give job ids or '--all'/)]);
  });
});
