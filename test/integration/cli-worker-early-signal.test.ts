/**
 * `prefork worker` signalled while it starts: a supervisor that stops a
 * node right after starting it (a rollout undone, a crash loop, `docker
 * stop` during boot). Loading the CLI's modules takes a few hundred ms; a
 * SIGTERM or SIGINT in that time used to kill the node by the signal itself.
 * It must stop in order instead: exit 0, no child left, nothing lost. The
 * signal is sent by the node to itself the moment a given module loads
 * (fixtures/signal-on-load.mjs), so it lands at a known point of the start.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBroker, type Broker } from 'prefork/broker';
import { cleanup, emptyRedisDb, fixture, makeClient, silent, spawnCliWorker } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 21;
let url = '';

beforeAll(async () => {
  url = await emptyRedisDb(DB);
});
afterEach(cleanup);

/** The pids of live processes whose environment holds `mark` (a node and the children it spawned). */
function processesMarked(mark: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(`PREFORK_TEST_MARK=${mark}\0`))
        found.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

async function withBroker<T>(use: (broker: Broker) => Promise<T>): Promise<T> {
  const broker = createBroker(url, { logger: silent });
  await broker.connect();
  try {
    return await use(broker);
  } finally {
    await broker.close();
  }
}

/** `prefork worker`, signalled by itself with `signal` when a module whose URL holds `at` loads. */
function signalledNode(at: string, signal: NodeJS.Signals, queue: string, mark: string) {
  return spawnCliWorker(['--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '2', '-Q', queue], {
    nodeArgs: ['--import', fixture('signal-on-load.mjs')],
    env: { PREFORK_TEST_SIGNAL_AT: at, PREFORK_TEST_SIGNAL: signal, PREFORK_TEST_MARK: mark },
  });
}

describe('prefork worker signalled while its modules load', { timeout: 60_000 }, () => {
  it.each([
    ['SIGTERM', 'the CLI loads its commands', 'node_modules/commander/'],
    ['SIGINT', 'the CLI loads its commands', 'node_modules/commander/'],
    ['SIGTERM', 'the worker command loads the Worker', '/dist/worker.js'],
    ['SIGTERM', 'the worker command loads the pool', '/dist/pool/pool.js'],
    ['SIGQUIT', 'the worker command loads the Worker', '/dist/worker.js'],
  ] as const)('%s while %s: an orderly stop, exit 0, no child, the job waiting untouched', async (signal, _, at) => {
    const queue = `early-${randomBytes(3).toString('hex')}`;
    const mark = randomBytes(6).toString('hex');
    const job = await makeClient(url).enqueue('record', [], { queue });
    const node = signalledNode(at, signal, queue, mark);
    node.ready.catch(() => undefined);
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.output()).toContain('worker stopped');
    expect(node.stdout()).not.toMatch(/^tasks/m);
    expect(processesMarked(mark)).toEqual([]);
    expect(await job.state()).toMatchObject({ state: 'PENDING' });
    await withBroker(async (broker) => {
      expect((await broker.counts([queue]))[0]).toMatchObject({ waiting: 1, reserved: 0, dead: 0 });
      expect(await broker.listNodes()).toEqual([]);
    });
  });

  it.each(['SIGHUP', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU'] as const)(
    '%s while the CLI loads: not a stop, nor a suspension (no child ran yet); the node starts and runs jobs',
    async (signal) => {
      const queue = `early-${signal.toLowerCase()}-${randomBytes(3).toString('hex')}`;
      const node = signalledNode('node_modules/commander/', signal, queue, randomBytes(6).toString('hex'));
      await node.ready;
      const job = await makeClient(url).enqueue('add', [2, 3], { queue });
      expect(await job.result({ timeout: '20s' })).toBe(5);
      expect(node.output()).toContain(`${signal} before the worker started: nothing to do`);
      expect(await node.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    },
  );

  it('a one-shot command signalled while it loads still dies of the signal, as before', async () => {
    const proc = spawn(process.execPath, ['--import', fixture('signal-on-load.mjs'), CLI, 'inspect', 'queues'], {
      stdio: 'ignore',
      env: {
        ...process.env,
        PREFORK_BROKER_URL: url,
        PREFORK_TEST_SIGNAL_AT: 'node_modules/commander/',
        PREFORK_TEST_SIGNAL: 'SIGTERM',
      },
    });
    const exit = await new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
  });
});

describe('prefork worker signalled while its children load the task module', { timeout: 60_000 }, () => {
  it('SIGTERM: exit 0, no child left, the node left the cluster, the job waiting untouched', async () => {
    const queue = `booting-${randomBytes(3).toString('hex')}`;
    const mark = randomBytes(6).toString('hex');
    const job = await makeClient(url).enqueue('record', [], { queue });
    const node = spawnCliWorker(['--app', fixture('slow-import.mjs'), '--broker', url, '-c', '2', '-Q', queue], {
      env: { PREFORK_TEST_IMPORT_MS: '3000', PREFORK_TEST_MARK: mark },
    });
    node.ready.catch(() => undefined);
    await withBroker(async (broker) => {
      await expect.poll(() => broker.listNodes().then((n) => n.length), { message: 'the node registered' }).toBe(1);
    });
    // Registered, its children still in their task module's import: the node has not started.
    expect(processesMarked(mark).length).toBeGreaterThan(1);
    expect(await node.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(node.output()).toContain('worker stopped');
    expect(node.stdout()).not.toMatch(/^tasks/m);
    expect(processesMarked(mark)).toEqual([]);
    expect(await job.state()).toMatchObject({ state: 'PENDING' });
    await withBroker(async (broker) => {
      expect((await broker.counts([queue]))[0]).toMatchObject({ waiting: 1, reserved: 0, dead: 0 });
      expect(await broker.listNodes()).toEqual([]);
    });
  });
});
