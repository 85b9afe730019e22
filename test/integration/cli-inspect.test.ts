/**
 * `prefork inspect active|reserved|scheduled|registered`, `prefork jobs`, and
 * the arguments and progress shown by `result` and `dead list`: the CLI in
 * its own process, a worker node in this one, the real Redis from the test
 * setup (a database of this file's own).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBroker } from '../../dist/broker/index.js';
import type { Broker } from '../../dist/broker/types.js';
import type { Worker } from 'prefork';
import { cleanup, emptyRedisDb, fixture, makeClient, makeWorker, newLedger, silent } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 28;
const exec = promisify(execFile);

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

interface JobJson {
  id: string;
  task: string;
  queue?: string;
  pid?: number;
  runtime?: number;
  args?: unknown[];
  argsError?: string;
  attempt?: number;
  dueAt?: number;
}

describe('prefork inspect and prefork jobs against a worker node', () => {
  let url = '';
  let gates = '';
  const open = (name: string): void => writeFileSync(`${gates}.${name}`, '');
  const gate = (name: string): string => `${gates}.${name}`;

  beforeEach(async () => {
    url = await emptyRedisDb(DB);
    gates = newLedger();
  });
  afterEach(cleanup);

  async function startWorker(name: string, options: Record<string, unknown> = {}): Promise<Worker> {
    const worker = makeWorker({
      broker: url,
      app: fixture('tasks-inspect.mjs'),
      name,
      concurrency: 1,
      ...options,
    });
    await worker.start();
    return worker;
  }

  const inspect = async (...args: string[]): Promise<{ node: string; jobs: JobJson[]; error?: string }[]> => {
    const r = await run(['inspect', ...args, '--json', '--broker', url]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as { node: string; jobs: JobJson[] }[];
  };

  it("inspect active shows a running job's node, child pid, task, arguments and runtime; reserved the one waiting behind it", async () => {
    const worker = await startWorker('insp-a', { prefetchMultiplier: 2 });
    const client = makeClient(url);
    const first = await client.enqueue('hold', [gate('a'), 'first job arguments']);
    const second = await client.enqueue('hold', [gate('b'), { label: 'second', n: 2 }]);
    const pids = (): number[] => worker.pool.stats().processes.map((p) => p.pid);

    await expect.poll(async () => (await inspect('active'))[0]?.jobs.length, { timeout: 20_000 }).toBe(1);
    const [active] = await inspect('active');
    expect(active!.node).toBe('insp-a');
    const running = active!.jobs[0]!;
    expect(running).toMatchObject({
      id: first.id,
      task: 'hold',
      queue: 'default',
      args: [gate('a'), 'first job arguments'],
    });
    expect(pids()).toContain(running.pid);
    expect(running.runtime).toBeGreaterThanOrEqual(0);

    const text = await run(['inspect', 'active', '--broker', url]);
    expect(text.code).toBe(0);
    const row = text.stdout.split('\n').find((l) => l.includes(first.id));
    expect(row).toContain(`insp-a  ${running.pid}`);
    expect(row).toContain('"first job arguments"');
    expect(row).toMatch(/ \d+\.\d s$/);

    const [reserved] = await inspect('reserved');
    expect(reserved!.jobs).toEqual([
      expect.objectContaining({ id: second.id, task: 'hold', args: [gate('b'), { label: 'second', n: 2 }] }),
    ]);
    open('a');
    open('b');
    await expect(second.result({ timeout: 20_000 })).resolves.toBeUndefined();
    await expect.poll(async () => (await inspect('active'))[0]?.jobs.length, { timeout: 20_000 }).toBe(0);
  });

  it('inspect active --node asks one node; an unknown node is an error', async () => {
    await startWorker('insp-b');
    await startWorker('insp-c');
    const nodes = await inspect('active', '--node', 'insp-c');
    expect(nodes.map((n) => n.node)).toEqual(['insp-c']);
    const r = await run(['inspect', 'active', '--node', 'nobody', '--broker', url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no live worker node named 'nobody'/);
  });

  it('inspect registered lists the tasks the node loaded', async () => {
    await startWorker('insp-d');
    const r = await run(['inspect', 'registered', '--json', '--broker', url]);
    expect(r.code).toBe(0);
    const [node] = JSON.parse(r.stdout) as { node: string; tasks: { name: string }[] }[];
    expect(node!.node).toBe('insp-d');
    expect(node!.tasks.map((t) => t.name)).toEqual(
      expect.arrayContaining(['hold', 'progressThenHold', 'spin', 'fail', 'echo']),
    );
    const text = await run(['inspect', 'registered', '--broker', url]);
    expect(text.stdout).toMatch(/^insp-d +hold +-$/m);
  });

  it('inspect scheduled shows a delayed job and a retry with their due times', async () => {
    await startWorker('insp-e');
    const client = makeClient(url);
    const before = Date.now();
    const later = await client.enqueue('echo', ['later'], { delay: '1h' });
    const retried = await client.enqueue('fail', ['once'], {
      retries: 2,
      backoff: { type: 'fixed', delay: 3_600_000, cap: 3_600_000 },
    });
    await expect.poll(async () => (await retried.state())?.state, { timeout: 20_000 }).toBe('RETRY');
    const r = await run(['inspect', 'scheduled', '--json', '--broker', url]);
    expect(r.code).toBe(0);
    const [page] = JSON.parse(r.stdout) as { queue: string; jobs: JobJson[]; next: string | null }[];
    expect(page!.queue).toBe('default');
    expect(page!.next).toBeNull();
    const byId = new Map(page!.jobs.map((j) => [j.id, j]));
    expect(byId.get(later.id)).toMatchObject({ task: 'echo', attempt: 0, args: ['later'] });
    expect(byId.get(retried.id)).toMatchObject({ task: 'fail', attempt: 1, args: ['once'] });
    for (const id of [later.id, retried.id]) expect(byId.get(id)!.dueAt).toBeGreaterThan(before + 3_500_000);
    const text = await run(['inspect', 'scheduled', '--broker', url]);
    expect(text.stdout).toMatch(
      new RegExp(`${later.id} +echo +\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z +delayed +\\["later"\\]`),
    );
    expect(text.stdout).toMatch(new RegExp(`${retried.id} +fail +\\S+ +retry 1 +\\["once"\\]`));
  });

  it('result and dead list show the arguments (shortened in text, whole with --json)', async () => {
    await startWorker('insp-f');
    const client = makeClient(url);
    const long = 'x'.repeat(200);
    const ok = await client.enqueue('echo', [long, { n: 1 }]);
    await ok.result({ timeout: 20_000 });
    const json = await run(['result', ok.id, '--json', '--broker', url]);
    expect(JSON.parse(json.stdout)).toMatchObject({ state: 'SUCCESS', args: [long, { n: 1 }] });
    const text = await run(['result', ok.id, '--broker', url]);
    expect(text.stdout).toMatch(/^args: +\["x{30,}\.\.\.$/m);

    const dead = await client.enqueue('fail', ['boom', 42]);
    await expect(dead.result({ timeout: 20_000 })).rejects.toThrow('boom');
    const list = await run(['dead', 'list', '--json', '--broker', url]);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ id: dead.id, args: ['boom', 42] })]);
    const table = await run(['dead', 'list', '--broker', url]);
    expect(table.stdout).toMatch(new RegExp(`${dead.id} +fail +default +\\["boom",42\\] +0 `));
  });

  it('a payload that does not decode is shown as such, not a crash', async () => {
    const broker: Broker = createBroker(url, { logger: silent });
    await broker.connect();
    try {
      await broker.enqueue([
        {
          id: 'bad-payload',
          task: 'echo',
          queue: 'raw',
          payload: new Uint8Array([0x93, 0x01]),
          attempt: 0,
          redeliveries: 0,
          options: {},
          enqueuedAt: Date.now(),
        },
      ]);
    } finally {
      await broker.close();
    }
    const json = await run(['jobs', 'raw', '--json', '--broker', url]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      jobs: [{ id: 'bad-payload', argsError: expect.stringMatching(/^payload does not decode/) as string }],
    });
    const text = await run(['jobs', 'raw', '--broker', url]);
    expect(text.stdout).toMatch(/bad-payload +echo +<payload does not decode/);
  });

  it('prefork result shows the progress a running job reported, and keeps it after the job ends', async () => {
    await startWorker('insp-g');
    const client = makeClient(url);
    const handle = await client.enqueue('progressThenHold', [gate('p'), { done: 3, of: 10 }]);
    await expect
      .poll(() => handle.progress(), { timeout: 20_000 })
      .toEqual({ value: { done: 3, of: 10 }, at: expect.any(Number) as number });
    const mid = await run(['result', handle.id, '--broker', url]);
    expect(mid.stdout).toMatch(/^state: +STARTED/m);
    expect(mid.stdout).toMatch(/^progress: \{"done":3,"of":10\} \(at \d{4}-/m);
    open('p');
    await expect(handle.result({ timeout: 20_000 })).resolves.toBe('done');
    const after = JSON.parse((await run(['result', handle.id, '--json', '--broker', url])).stdout) as Record<
      string,
      unknown
    >;
    expect(after).toMatchObject({ state: 'SUCCESS', progress: { done: 3, of: 10 } });
  });

  it("prefork jobs pages through a queue's waiting jobs with a cursor; a bad cursor or state is a usage error", async () => {
    const client = makeClient(url);
    const waiting = await client.enqueueMany(
      Array.from({ length: 7 }, (_, i) => ({ name: 'echo', args: [i], options: { queue: 'pages' } })),
    );
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await run([
        'jobs',
        'pages',
        '--limit',
        '3',
        '--json',
        '--broker',
        url,
        ...(cursor ? ['--cursor', cursor] : []),
      ]);
      expect(r.code).toBe(0);
      const page = JSON.parse(r.stdout) as { jobs: JobJson[]; next: string | null; state: string };
      expect(page.state).toBe('waiting');
      expect(page.jobs.length).toBeLessThanOrEqual(3);
      ids.push(...page.jobs.map((j) => j.id));
      cursor = page.next;
      pages++;
    } while (cursor !== null);
    expect(ids).toEqual(waiting.map((h) => h.id));
    expect(pages).toBe(3);

    const text = await run(['jobs', 'pages', '--limit', '3', '--broker', url]);
    expect(text.stdout).toMatch(/^next page: prefork jobs pages --state waiting --limit 3 --cursor \S+$/m);
    const bad = await run(['jobs', 'pages', '--cursor', 'nonsense', '--broker', url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/invalid --cursor: "nonsense"/);
    const badState = await run(['jobs', 'pages', '--state', 'running', '--broker', url]);
    expect(badState.code).toBe(2);
    expect(badState.stderr).toMatch(/--state.*'running'.*waiting, delayed, dead/);
  });
});
