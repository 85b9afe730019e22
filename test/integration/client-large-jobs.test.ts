import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ArgumentsTooLargeError, Client } from 'prefork';
import type { Delivery } from '../../dist/broker/types.js';
import { startRedisServer, type RedisServer } from '../../scripts/redis.mjs';
import { cleanup, countsOf, fixture, makeWorker, silent } from '../helpers/worker.js';
import { Scope } from './redis-helpers.js';

afterEach(cleanup);

function client(broker: string, options: { namespace?: string; maxFrameSize?: number | string } = {}): Client {
  return new Client({ broker, logger: silent, ...options });
}

/**
 * Bulk enqueues pack many jobs into one script argument; Redis refuses an
 * argument longer than its proto-max-bulk-len (512 MB by default). Here the
 * server's limit is lowered to 1 MB, so a few MB of jobs show the same.
 */
describe('Client on Redis: a bulk enqueue of large jobs', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer({ args: ['--proto-max-bulk-len', '1mb'] });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('lands every job, in order, whatever their sizes add up to', { timeout: 60_000 }, async () => {
    const scope = new Scope(server.url);
    const c = client(server.url, { namespace: scope.ns });
    try {
      const sizes = Array.from({ length: 40 }, (_, i) => (i % 8 === 0 ? 700_000 : 100_000));
      const handles = await c.enqueueMany(sizes.map((n, i) => ({ name: 'length', args: [Buffer.alloc(n, i)] })));
      const worker = await scope.broker();
      await worker.register({
        id: 'n',
        name: 'n@test',
        host: 'test',
        pid: process.pid,
        queues: ['default'],
        concurrency: '1',
        startedAt: Date.now(),
      });
      const reply = await worker.fetch({
        nodeId: 'n',
        plan: [{ queue: 'default', quota: 100 }],
        count: 100,
        settle: [],
      });
      const got: Delivery[] = reply.deliveries;
      expect(got.map((d) => d.job.id)).toEqual(handles.map((h) => h.id));
      expect(got.map((d) => d.job.payload.length - 6)).toEqual(sizes);
    } finally {
      await c.close();
      await scope.cleanup();
    }
  });
});

describe('Client: arguments larger than a child can receive (maxFrameSize)', () => {
  it('refuses the job at enqueue, naming the task and the sizes, and enqueues nothing of the batch', async () => {
    const c = client(`memory://large-jobs-${randomUUID()}`, { maxFrameSize: '1MiB' });
    try {
      const err = await c
        .enqueueMany([
          { name: 'length', args: [Buffer.alloc(1000)] },
          { name: 'length', args: [Buffer.alloc(2 * 1024 * 1024)] },
        ])
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ArgumentsTooLargeError);
      expect(err).toMatchObject({ code: 'PREFORK_ARGS_TOO_LARGE', task: 'length', limit: 1024 * 1024 });
      expect((err as ArgumentsTooLargeError).bytes).toBeGreaterThan(2 * 1024 * 1024);
      expect((err as Error).message).toMatch(
        /task length .* over the 1048576 bytes a child can receive \(maxFrameSize\)/,
      );
      expect((await countsOf(c, ['default']))[0]!.waiting).toBe(0);
    } finally {
      await c.close();
    }
  });

  it('refuses by default what the default pool refuses (64 MiB)', async () => {
    const c = client(`memory://large-jobs-${randomUUID()}`);
    try {
      await expect(c.enqueue('length', [Buffer.alloc(64 * 1024 * 1024)])).rejects.toBeInstanceOf(
        ArgumentsTooLargeError,
      );
      await c.enqueue('length', [Buffer.alloc(60 * 1024 * 1024)]);
      expect((await countsOf(c, ['default']))[0]!.waiting).toBe(1);
    } finally {
      await c.close();
    }
  });

  it('the largest job it accepts runs on a worker with the same maxFrameSize', async () => {
    const broker = `memory://large-jobs-${randomUUID()}`;
    const limit = 1024 * 1024;
    const c = client(broker, { maxFrameSize: limit });
    try {
      // How far over the limit a job of `limit` bytes of arguments is: cut that much off.
      const probe = await c.enqueue('length', [Buffer.alloc(limit)]).catch((e: unknown) => e);
      expect(probe).toBeInstanceOf(ArgumentsTooLargeError);
      const largest = limit - ((probe as ArgumentsTooLargeError).bytes - limit);
      await expect(c.enqueue('length', [Buffer.alloc(largest + 1)])).rejects.toBeInstanceOf(ArgumentsTooLargeError);
      const job = await c.enqueue('length', [Buffer.alloc(largest)]);
      const worker = makeWorker({
        broker,
        app: fixture('tasks-basic.mjs'),
        concurrency: 1,
        pool: { maxFrameSize: limit },
      });
      await worker.start();
      expect(await job.result({ timeout: '20s' })).toBe(largest);
    } finally {
      await c.close();
    }
  });
});
