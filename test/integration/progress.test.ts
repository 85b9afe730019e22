/**
 * currentTask().progress(value): child → parent over the pipe (a bare Pool's
 * onProgress), and stored with the job's result record by a Worker, throttled
 * so a task reporting in a loop cannot flood the pipe or Redis.
 */
import { writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PROGRESS_INTERVAL_MS } from '../../dist/child/job-progress.js';
import '../setup/provided.js';
import { startPool, terminatePools } from '../helpers/pool.js';
import { cleanup, fixture, makeClient, makeWorker, newLedger, uniqueName } from '../helpers/worker.js';

const APP = fixture('tasks-inspect.mjs');

describe('progress reported by a task', () => {
  afterEach(async () => {
    await terminatePools();
    await cleanup();
  });

  it('a Pool passes each report to onProgress while the job runs', async () => {
    const pool = await startPool({ app: APP, processes: 1 });
    const gate = `${newLedger()}.gate`;
    const seen: unknown[] = [];
    const done = pool.apply('progressThenHold', [gate, { step: 'parsing', pct: 40 }], {
      onProgress: (value) => seen.push(value),
    });
    // The task holds until the test has seen its report: it is seen mid-job.
    await expect.poll(() => seen, { timeout: 20_000 }).toEqual([{ step: 'parsing', pct: 40 }]);
    writeFileSync(gate, '');
    await expect(done).resolves.toBe('done');
  });

  it('10,000 reports in a loop reach the parent as a few, the last one always', async () => {
    const pool = await startPool({ app: APP, processes: 1 });
    // A tight loop: the first report goes, the others replace one another until the job ends.
    const spun: unknown[] = [];
    await expect(pool.apply('spin', [10_000], { onProgress: (v) => spun.push(v) })).resolves.toBe(10_000);
    expect(spun).toEqual([0, 9_999]);
    // A loop that yields: at most one report per PROGRESS_INTERVAL_MS it ran, plus the first and the last.
    const seen: unknown[] = [];
    const ranMs = await pool.apply('spinYielding', [10_000], { onProgress: (v) => seen.push(v) });
    expect(seen.at(-1)).toBe(9_999);
    expect(seen.length).toBeLessThanOrEqual(Math.floor(Number(ranMs) / PROGRESS_INTERVAL_MS) + 2);
  });

  it('a value that cannot be serialized throws to the task; an onProgress that throws is ignored', async () => {
    const pool = await startPool({ app: APP, processes: 1 });
    await expect(pool.apply('badProgress', [])).resolves.toBe('TypeError');
    const gate = `${newLedger()}.gate`;
    writeFileSync(gate, '');
    const out = pool.apply('progressThenHold', [gate, 1], {
      onProgress: () => {
        throw new Error('listener bug');
      },
    });
    await expect(out).resolves.toBe('done');
  });

  it('a Worker stores and tells a progress value that only msgpack extensions carry: a BigInt past 64 bits', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('progress');
    await makeWorker({ broker: url, namespace, app: APP, concurrency: 1 }).start();
    const client = makeClient(url, namespace);
    const big = 2n ** 70n;
    const stop = new AbortController();
    const told: unknown[] = [];
    const following = (async () => {
      for await (const e of client.events({ signal: stop.signal, types: ['job-progress'] }))
        if (e.type === 'job-progress') told.push(e.progress);
    })();
    const gate = `${newLedger()}.gate`;
    const handle = await client.enqueue('progressThenHold', [gate, big]);
    // Stored while the job runs (it holds until the gate opens), not only with its final record.
    await expect.poll(() => handle.progress(), { timeout: 20_000 }).toMatchObject({ value: big });
    await expect.poll(() => told, { timeout: 20_000 }).toEqual([big]);
    writeFileSync(gate, '');
    expect(await handle.result()).toBe('done');
    stop.abort();
    await following;
  });

  it('a Worker stores the progress with the result record; a loop of 10,000 reports makes a few writes', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('progress');
    const worker = makeWorker({ broker: url, namespace, app: APP, concurrency: 1 });
    await worker.start();
    const client = makeClient(url, namespace);

    // Count the writes of this job's result key (keyspace notifications on the test Redis).
    const id = uniqueName('job');
    const key = `${namespace}:res:${id}`;
    const admin = new Redis(url);
    const sub = new Redis(url);
    let writes = 0;
    const [, events = ''] = (await admin.config('GET', 'notify-keyspace-events')) as string[];
    try {
      await admin.config('SET', 'notify-keyspace-events', 'K$');
      await sub.subscribe(`__keyspace@0__:${key}`);
      sub.on('message', (_channel: string, event: string) => {
        if (event === 'set') writes++;
      });
      const handle = await client.enqueue('spinYielding', [10_000], { id });
      const ranMs = Number(await handle.result({ timeout: 30_000 }));
      await expect(handle.progress()).resolves.toEqual({ value: 9_999, at: expect.any(Number) as number });
      // The final record was written last: its notification is the last to come.
      await expect.poll(() => writes, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      // One write per report the child let through (see the Pool test above), and the final record.
      expect(writes).toBeLessThanOrEqual(Math.floor(ranMs / PROGRESS_INTERVAL_MS) + 3);
    } finally {
      await admin.config('SET', 'notify-keyspace-events', events);
      sub.disconnect();
      admin.disconnect();
    }
  });
});
