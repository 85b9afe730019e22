/**
 * `prefork worker`'s exit code when its pool fails (children die before they
 * can work, here a deploy that broke under the running node): 1, whether the
 * pool fails while the node runs or while it is stopping warm. A supervisor
 * must not take a node that gave up for one that finished cleanly.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBroker } from 'prefork/broker';
import {
  cleanup,
  emptyRedisDb,
  fixture,
  makeClient,
  newLedger,
  readLedger,
  silent,
  waitUntil,
} from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 9;
let url = '';

beforeAll(async () => {
  url = await emptyRedisDb(DB);
});
const procs: ReturnType<typeof spawn>[] = [];
afterEach(async () => {
  for (const proc of procs.splice(0)) if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  await cleanup();
});

interface Node {
  output: () => string;
  exited: Promise<{ code: number | null; signal: string | null }>;
  kill: (signal: NodeJS.Signals) => void;
}

async function startNode(queue: string, ledger: string, marker: string, concurrency: number): Promise<Node> {
  const proc = spawn(
    process.execPath,
    [
      CLI,
      'worker',
      '--app',
      fixture('crashes-when-broken.mjs'),
      '--broker',
      url,
      '-c',
      String(concurrency),
      '-Q',
      queue,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PREFORK_TEST_LEDGER: ledger, PREFORK_TEST_BREAK: marker },
    },
  );
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  procs.push(proc);
  await waitUntil(() => out.includes('worker ready'), 'the worker is ready');
  return { output: () => out, exited, kill: (signal) => proc.kill(signal) };
}

async function counts(queue: string): Promise<unknown> {
  const broker = createBroker(url, { logger: silent });
  await broker.connect();
  try {
    return (await broker.counts([queue]))[0];
  } finally {
    await broker.close();
  }
}

describe('prefork worker whose pool fails', () => {
  it('while running: exits 1', async () => {
    const queue = 'fails-running';
    const ledger = newLedger();
    const marker = join(dirname(ledger), 'broken');
    const node = await startNode(queue, ledger, marker, 1);
    await makeClient(url).enqueue('crashWhenBroken', [], { queue });
    await waitUntil(() => readLedger(ledger).length === 1, 'the job started');
    // Its child dies and no replacement can load the module: the pool fails.
    writeFileSync(marker, '');
    expect(await node.exited).toEqual({ code: 1, signal: null });
    expect(node.output()).toMatch(/pool failed/);
  });

  it('during a warm stop (SIGTERM while a job runs): exits 1, the unfinished job back in its queue', async () => {
    const queue = 'fails-stopping';
    const ledger = newLedger();
    const marker = join(dirname(ledger), 'broken');
    const node = await startNode(queue, ledger, marker, 2);
    const client = makeClient(url);
    await client.enqueue('record', [600_000], { queue });
    await client.enqueue('crashWhenBroken', [], { queue });
    await waitUntil(() => readLedger(ledger).length === 2, 'both jobs started');
    node.kill('SIGTERM');
    // The warm stop waits for the long job; only then does a child die and the pool fail.
    await waitUntil(() => node.output().includes('worker stopping'), 'the worker is stopping');
    writeFileSync(marker, '');
    expect(await node.exited).toEqual({ code: 1, signal: null });
    expect(node.output()).toMatch(/pool failed/);
    expect(await counts(queue)).toMatchObject({ waiting: 1, reserved: 0 });
  });
});
