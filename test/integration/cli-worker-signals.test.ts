/**
 * The signals an operator sends to `prefork worker` (Celery's and Sidekiq's):
 * SIGTTIN / SIGTTOU grow and shrink the pool by one (autoscale bounds
 * respected), SIGHUP replaces the children one by one so a new version of the
 * task module answers (no job failed or lost), SIGUSR1 logs the pool and each
 * child's job, SIGTSTP makes the node quiet (its running job finishes, it
 * fetches no more). HUP and TSTP go to the whole process group, as a terminal
 * sends them: the children must not die or stop of them.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import '../setup/provided.js';
import type { Client } from '../../dist/index.js';
import { cleanup, emptyRedisDb, fixture, makeClient, newLedger, readLedger, startNode } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const INDEX = pathToFileURL(fileURLToPath(new URL('../../dist/index.js', import.meta.url))).href;
const DB = 18;
const LEASE_MS = 1_500;

interface Node {
  proc: ChildProcess;
  out: () => string;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

let url = '';
let client: Client;
const groups: number[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  url = await emptyRedisDb(DB);
});
afterEach(async () => {
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await cleanup();
});
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `prefork worker` in its own process group (as under a terminal or a service manager); resolves once ready. */
async function worker(args: string[], env: Record<string, string> = {}): Promise<Node> {
  const proc = spawn(process.execPath, [CLI, 'worker', '--broker', url, ...args], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  groups.push(proc.pid!);
  let out = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  await expect.poll(() => out, { message: 'the worker is ready', timeout: 30_000 }).toContain('worker ready');
  return { proc, out: () => out, exited };
}

/**
 * Sends `sig` and waits for the line it logs: signals of one kind sent in a
 * row may reach the process as one (the kernel does not queue them).
 */
async function signal(node: Node, sig: NodeJS.Signals, logged: RegExp): Promise<void> {
  const count = (): number =>
    node
      .out()
      .split('\n')
      .filter((line) => logged.test(line)).length;
  const before = count();
  node.proc.kill(sig);
  await expect.poll(count, { message: `${sig} was handled`, timeout: 30_000 }).toBe(before + 1);
}

interface Stats {
  pool: {
    processes: { pid: number; state: string }[];
    autoscale?: { max: number; min: number };
  };
  quiet: boolean;
}

function statsOf(name: string): Stats {
  const r = spawnSync(process.execPath, [CLI, 'inspect', 'stats', '--json', '--node', name, '--broker', url], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status).toBe(0);
  return (JSON.parse(r.stdout) as { stats: Stats }[])[0]!.stats;
}
const liveOf = (name: string): number => statsOf(name).pool.processes.filter((p) => p.state !== 'exited').length;

/** A task module whose `version` task answers `v`; rewritten in place for the reload. */
function writeTasks(file: string, v: number): void {
  writeFileSync(
    file,
    `import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { currentTask, defineTasks } from ${JSON.stringify(INDEX)};
export default defineTasks({
  version: () => ${v},
  async slow(ms) {
    appendFileSync(process.env.PREFORK_TEST_LEDGER, currentTask().id + ' started-v${v} ' + Date.now() + '\\n');
    await sleep(ms);
    appendFileSync(process.env.PREFORK_TEST_LEDGER, currentTask().id + ' done-v${v} ' + Date.now() + '\\n');
    return ${v};
  },
});
`,
  );
}

// Each test boots a node (and asks it for its stats several times): slow on a loaded machine.
describe('signals of prefork worker', { timeout: 90_000 }, () => {
  beforeEach(() => {
    client = makeClient(url);
  });

  it('SIGTTIN grows and SIGTTOU shrinks the pool by one', async () => {
    const node = await worker(['--app', fixture('worker-tasks.mjs'), '-c', '2', '-n', 'sig-fixed', '-Q', 'sig-size']);
    await signal(node, 'SIGTTIN', /SIGTTIN: one more child \(3\)/);
    await expect.poll(() => liveOf('sig-fixed'), { timeout: 30_000 }).toBe(3);
    await signal(node, 'SIGTTOU', /SIGTTOU: one child fewer \(2\)/);
    await signal(node, 'SIGTTOU', /SIGTTOU: one child fewer \(1\)/);
    await expect.poll(() => liveOf('sig-fixed'), { timeout: 30_000 }).toBe(1);
  });

  it('with autoscale, SIGTTIN past max raises it and SIGTTOU stops at min', async () => {
    const node = await worker([
      '--app',
      fixture('worker-tasks.mjs'),
      '--autoscale',
      '2,1',
      '-n',
      'sig-auto',
      '-Q',
      'sig-size',
    ]);
    await signal(node, 'SIGTTIN', /SIGTTIN: one more child \(2\)/);
    await signal(node, 'SIGTTIN', /SIGTTIN: one more child \(3\)/);
    expect(statsOf('sig-auto').pool.autoscale).toEqual({ max: 3, min: 1 });
    // Down to min one signal at a time (the Autoscaler may retire idle children first, after its keepalive).
    for (let i = 0; i < 3 && !/SIGTTOU: no child to retire/.test(node.out()); i++)
      await signal(node, 'SIGTTOU', /SIGTTOU: (one child fewer|no child to retire)/);
    expect(node.out()).toMatch(/SIGTTOU: no child to retire/);
    await expect.poll(() => liveOf('sig-auto'), { timeout: 30_000 }).toBe(1);
    expect(statsOf('sig-auto').pool.autoscale).toEqual({ max: 3, min: 1 });
    expect(node.proc.exitCode).toBeNull();
  });

  it('SIGHUP to the group replaces every child while jobs run: none failed or lost, the new module version answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefork-reload-'));
    dirs.push(dir);
    const tasks = join(dir, 'tasks.mjs');
    const ledger = newLedger();
    writeTasks(tasks, 1);
    const queue = 'sig-reload';
    const node = await worker(['--app', tasks, '-c', '2', '-n', 'sig-reload', '-Q', queue], {
      PREFORK_TEST_LEDGER: ledger,
    });
    const before = statsOf('sig-reload').pool.processes.map((p) => p.pid);
    expect(await (await client.enqueue('version', [], { queue })).result({ timeout: 30_000 })).toBe(1);

    const jobs = await Promise.all(Array.from({ length: 8 }, () => client.enqueue('slow', [500], { queue })));
    await expect
      .poll(() => readLedger(ledger).length, { message: 'both children run a job' })
      .toBeGreaterThanOrEqual(2);
    writeTasks(tasks, 2);
    process.kill(-node.proc.pid!, 'SIGHUP');

    await expect.poll(() => node.out(), { timeout: 60_000 }).toMatch(/SIGHUP: \d+ children replaced/);
    for (const job of jobs) {
      expect([1, 2]).toContain(await job.result({ timeout: 30_000 }));
      expect(await job.state()).toMatchObject({ state: 'SUCCESS' });
    }
    // Each ran once, to its end (the jobs started before the reload on the old version).
    const done = readLedger(ledger).filter((e) => e.queue.startsWith('done-'));
    expect(done.map((e) => e.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(readLedger(ledger).filter((e) => e.queue.startsWith('started-'))).toHaveLength(8);
    const after = statsOf('sig-reload').pool.processes.filter((p) => p.state !== 'exited');
    expect(after).toHaveLength(2);
    for (const p of after) expect(before).not.toContain(p.pid);
    const versions = await Promise.all(
      Array.from({ length: 6 }, async () =>
        (await client.enqueue('version', [], { queue })).result({ timeout: 30_000 }),
      ),
    );
    expect(versions).toEqual([2, 2, 2, 2, 2, 2]);
    expect(node.out()).not.toMatch(/child died|WorkerLostError/);
  });

  it('SIGHUP with a module that no longer loads: the worker fails, and no line says children were replaced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefork-reload-'));
    dirs.push(dir);
    const tasks = join(dir, 'tasks.mjs');
    writeTasks(tasks, 1);
    const node = await worker(['--app', tasks, '-c', '2', '-n', 'sig-broken', '-Q', 'sig-broken']);
    writeFileSync(tasks, 'export default {\n');
    node.proc.kill('SIGHUP');
    expect(await node.exited).toEqual({ code: 1, signal: null });
    expect(node.out()).toMatch(/SIGHUP: reloading the task module/);
    expect(node.out()).toMatch(/worker stopped: /);
    // It read as a reload done, logged after the failure (its count the children retired before it).
    expect(node.out()).not.toMatch(/children replaced/);
  });

  it('a signal to the group reaches no child, not even one still booting, before it ignores such signals', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'prefork-boot-'));
    dirs.push(dir);
    const hold = join(dir, 'hold');
    const node = await worker(
      [
        '--app',
        fixture('worker-tasks.mjs'),
        '-c',
        '1',
        '-n',
        'sig-boot',
        '-Q',
        'sig-boot',
        '--log-level',
        'debug',
        `--node-arg=--import=${fixture('held-boot.mjs')}`,
      ],
      { PREFORK_TEST_HOLD: hold },
    );
    // One more child, held early in its boot: Node's own defaults still rule its signals.
    writeFileSync(hold, '');
    await signal(node, 'SIGTTIN', /SIGTTIN: one more child \(2\)/);
    await expect.poll(() => existsSync(hold), { message: 'the new child holds its boot', timeout: 30_000 }).toBe(false);
    const held = Number(readdirSync(dir)[0]!.split('.').pop());
    // A terminal's hangup reaches the whole process group.
    process.kill(-node.proc.pid!, 'SIGHUP');
    await expect
      .poll(node.out, { message: 'the reload ended', timeout: 30_000 })
      .toMatch(/SIGHUP: \d+ children replaced/);
    rmSync(`${hold}.${held}`, { force: true });
    const endOf = (): string[] =>
      node
        .out()
        .split('\n')
        .filter((line) => line.includes(`"childPid":${held},`) && /"msg":"child (exited|died)"/.test(line));
    await expect.poll(() => endOf().length, { message: 'the held child ended', timeout: 30_000 }).toBe(1);
    // Ended by the reload (its turn came while it still booted), not by the hangup.
    expect(endOf()[0]).toContain('"msg":"child exited"');
    expect(endOf()[0]).not.toContain('SIGHUP');
  });

  it('SIGTTIN, SIGTTOU and SIGHUP during a warm stop are ignored, saying so, not naming a bound the pool is at', async () => {
    const queue = 'sig-stopping';
    const ledger = newLedger();
    const node = await worker(['--app', fixture('worker-tasks.mjs'), '-c', '2', '-n', 'sig-stopping', '-Q', queue], {
      PREFORK_TEST_LEDGER: ledger,
    });
    const job = await client.enqueue('recordUntilFile', ['go'], { queue });
    await expect.poll(() => readLedger(ledger).length, { message: 'the job runs', timeout: 30_000 }).toBe(1);
    // The warm stop waits for the running job: the node is stopping while it does.
    await signal(node, 'SIGTERM', /SIGTERM: warm shutdown/);
    await signal(node, 'SIGTTIN', /SIGTTIN: ignored: the node is stopping/);
    await signal(node, 'SIGTTOU', /SIGTTOU: ignored: the node is stopping/);
    await signal(node, 'SIGHUP', /SIGHUP: ignored: the node is stopping/);
    expect(node.out()).not.toMatch(/maxProcesses\): not grown|no child to retire|reloading the task module/);
    writeFileSync(`${ledger}.go`, '');
    expect(await job.result({ timeout: '30s' })).toBe(job.id);
    expect(await node.exited).toEqual({ code: 0, signal: null });
  });

  it("SIGUSR1 logs the pool's stats and the job each child runs", async () => {
    const queue = 'sig-usr1';
    const ledger = newLedger();
    const node = await worker(['--app', fixture('worker-tasks.mjs'), '-c', '2', '-n', 'sig-usr1', '-Q', queue], {
      PREFORK_TEST_LEDGER: ledger,
    });
    const job = await client.enqueue('record', [3_000], { queue });
    await expect.poll(() => readLedger(ledger).length).toBe(1);
    node.proc.kill('SIGUSR1');
    await expect.poll(() => node.out()).toMatch(/SIGUSR1: 2 children, 1 jobs held/);
    expect(node.out()).toMatch(new RegExp(`child \\d+: running record ${job.id} for \\d+ ms`));
    expect(node.out()).toMatch(/child \d+: idle/);
    expect(node.proc.exitCode).toBeNull();
  });

  it('SIGTSTP to the group: quiet; the running job finishes, a new job is left for another node, SIGTERM still stops it', async () => {
    const queue = 'sig-quiet';
    const ledger = newLedger();
    const node = await worker(['--app', fixture('worker-tasks.mjs'), '-c', '2', '-n', 'sig-quiet', '-Q', queue], {
      PREFORK_TEST_LEDGER: ledger,
    });
    const running = await client.enqueue('record', [1_000], { queue });
    await expect.poll(() => readLedger(ledger).length).toBe(1);
    process.kill(-node.proc.pid!, 'SIGTSTP');
    await expect.poll(() => node.out()).toMatch(/SIGTSTP: quiet/);
    expect(statsOf('sig-quiet').quiet).toBe(true);
    // An idle node blocked on the queue would take this at once: quiet, it is left for a node that starts later.
    const later = await client.enqueue('record', [], { queue });
    await startNode({ broker: url, name: 'sig-other', concurrency: 1, queues: queue, lease: LEASE_MS }, ledger);
    expect(await later.result({ timeout: 30_000 })).toBe(later.id);
    expect(await later.state()).toMatchObject({ state: 'SUCCESS', node: 'sig-other' });
    expect(await running.result({ timeout: 30_000 })).toBe(running.id);
    expect(await running.state()).toMatchObject({ state: 'SUCCESS', node: 'sig-quiet' });

    node.proc.kill('SIGTERM');
    expect(await node.exited).toEqual({ code: 0, signal: null });
  });
});
