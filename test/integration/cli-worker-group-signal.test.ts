/**
 * `prefork worker` under a supervisor that signals its whole process group
 * (`timeout`, `kill -TERM -<pgid>`, systemd's default KillMode=control-group):
 * every process of the node gets the SIGTERM, the children too. It must still
 * be a warm shutdown: the parent alone decides when its children stop.
 */
import { spawn } from 'node:child_process';
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
const DB = 13;
let url = '';

beforeAll(async () => {
  url = await emptyRedisDb(DB);
});
const groups: number[] = [];
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

async function counts(queue: string): Promise<unknown> {
  const broker = createBroker(url, { logger: silent });
  await broker.connect();
  try {
    return (await broker.counts([queue]))[0];
  } finally {
    await broker.close();
  }
}

describe('a SIGTERM sent to the whole process group of prefork worker', () => {
  it('is a warm shutdown: the jobs in flight finish, the unstarted ones go back, none is dead, exit 0', async () => {
    const queue = 'group-term';
    const ledger = newLedger();
    const node = spawn(
      process.execPath,
      [CLI, 'worker', '--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '2', '-Q', queue],
      {
        // Its own process group, as under a service manager: -pid signals the parent and its children.
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PREFORK_TEST_LEDGER: ledger },
      },
    );
    const pgid = node.pid!;
    groups.push(pgid);
    let out = '';
    node.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    node.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      node.once('exit', (code, signal) => resolve({ code, signal })),
    );
    await waitUntil(() => out.includes('worker ready'), 'the worker is ready');

    const client = makeClient(url);
    const running = [
      await client.enqueue('record', [1_500], { queue }),
      await client.enqueue('record', [1_500], { queue }),
    ];
    await waitUntil(() => readLedger(ledger).length === 2, 'both children run a job');
    // Prefetched behind the running jobs (fair: no idle child), never started.
    const unstarted = [await client.enqueue('record', [], { queue }), await client.enqueue('record', [], { queue })];
    await waitUntil(
      async () => ((await counts(queue)) as { reserved: number }).reserved === 4,
      'the node holds all four jobs',
    );

    process.kill(-pgid, 'SIGTERM');

    expect(await exited).toEqual({ code: 0, signal: null });
    for (const handle of running) expect(await handle.state()).toMatchObject({ state: 'SUCCESS', value: handle.id });
    // Only the running jobs ran; the others are back in the queue, and nothing is dead.
    expect(
      readLedger(ledger)
        .map((e) => e.id)
        .sort(),
    ).toEqual(running.map((h) => h.id).sort());
    for (const handle of unstarted) expect(await handle.state()).not.toMatchObject({ state: 'FAILURE' });
    expect(await counts(queue)).toMatchObject({ waiting: 2, reserved: 0, dead: 0 });
  });
});
