/**
 * `prefork worker`'s exit code when its pool fails (children die before they
 * can work, here a deploy that broke under the running node): 1, whether the
 * pool fails while the node runs or while it is stopping warm. A supervisor
 * must not take a node that gave up for one that finished cleanly.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBroker } from 'prefork/broker';
import { freePort } from '../../scripts/redis.mjs';
import {
  cleanup,
  emptyRedisDb,
  fixture,
  makeClient,
  newLedger,
  readLedger,
  silent,
  spawnCliWorker,
  type CliWorker,
} from '../helpers/worker.js';

const DB = 9;
let url = '';

beforeAll(async () => {
  url = await emptyRedisDb(DB);
});
afterEach(cleanup);

/** A node on crashes-when-broken.mjs, whose children cannot load it once `marker` exists; resolves once ready. */
async function startNode(queue: string, ledger: string, marker: string, concurrency: number): Promise<CliWorker> {
  const node = spawnCliWorker(
    ['--app', fixture('crashes-when-broken.mjs'), '--broker', url, '-c', String(concurrency), '-Q', queue],
    { env: { PREFORK_TEST_LEDGER: ledger, PREFORK_TEST_BREAK: marker } },
  );
  await node.ready;
  return node;
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

describe('prefork worker stopped before its broker answered', () => {
  it('SIGTERM while it retries its start: exits 0, says it stopped, and prints no tasks line as if it had started', async () => {
    const port = await freePort();
    const node = spawnCliWorker(['--app', fixture('worker-tasks.mjs'), '--broker', `redis://127.0.0.1:${port}`]);
    node.ready.catch(() => undefined);
    await expect.poll(node.output, { timeout: 30_000 }).toContain('retrying until it answers');
    expect(await node.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(node.output()).toContain('worker stopped');
    expect(node.stdout()).not.toMatch(/^tasks/m);
  });
});

describe('prefork worker whose pool fails', () => {
  it('while running: exits 1', async () => {
    const queue = 'fails-running';
    const ledger = newLedger();
    const marker = join(dirname(ledger), 'broken');
    const node = await startNode(queue, ledger, marker, 1);
    await makeClient(url).enqueue('crashWhenBroken', [], { queue });
    await expect.poll(() => readLedger(ledger).length, { message: 'the job started' }).toBe(1);
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
    await expect.poll(() => readLedger(ledger).length, { message: 'both jobs started' }).toBe(2);
    node.proc.kill('SIGTERM');
    // The warm stop waits for the long job; only then does a child die and the pool fail.
    await expect.poll(() => node.output(), { message: 'the worker is stopping' }).toContain('worker stopping');
    writeFileSync(marker, '');
    expect(await node.exited).toEqual({ code: 1, signal: null });
    expect(node.output()).toMatch(/pool failed/);
    expect(await counts(queue)).toMatchObject({ waiting: 1, reserved: 0 });
  });
});
