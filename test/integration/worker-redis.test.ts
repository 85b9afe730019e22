/**
 * What only a real Redis shows: several nodes sharing it, a node SIGKILLed
 * with jobs in hand, Redis restarted or frozen under a running node, Redis
 * absent at start.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { freePort, startRedisServer } from '../../scripts/redis.mjs';
import { Redis } from 'ioredis';
import { createBroker } from 'prefork/broker';
import {
  captureLog,
  cleanup,
  makeClient,
  makeWorker,
  newLedger,
  readLedger,
  silent,
  startNode,
  uniqueName,
} from '../helpers/worker.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

afterEach(cleanup);

describe('Worker over Redis: failures of nodes and of Redis', () => {
  it('a node SIGKILLed with jobs buffered and running loses none: another node recovers and completes them', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const concurrency = 2;
    const prefetchMultiplier = 4;
    const a = await startNode(
      { broker: url, namespace, concurrency, prefetchMultiplier, lease: 1500, name: 'node-a' },
      ledger,
    );
    const client = makeClient(url, namespace);
    const jobs = await client.enqueueMany(Array.from({ length: 40 }, () => ({ name: 'record', args: [150] })));
    await expect
      .poll(() => readLedger(ledger).length, { message: 'node A started some jobs' })
      .toBeGreaterThanOrEqual(3);
    a.proc.kill('SIGKILL');
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });

    await makeWorker({ broker: url, namespace, ledger, concurrency, lease: 1500, name: 'node-b' }).start();
    const values = await Promise.all(jobs.map((j) => j.result({ timeout: 60_000 })));
    expect(values).toEqual(jobs.map((j) => j.id));
    const runs = readLedger(ledger).map((r) => r.id);
    expect(new Set(runs)).toEqual(new Set(jobs.map((j) => j.id)));
    // At least once, and the duplicates are bounded by what node A held: its prefetch window.
    expect(runs.length - jobs.length).toBeLessThanOrEqual(concurrency * prefetchMultiplier);
  });

  it('a node stopped warm (SIGTERM) exits 0 and hands back what it had not started', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const a = await startNode(
      { broker: url, namespace, concurrency: 1, prefetchMultiplier: 10, name: 'node-a' },
      ledger,
    );
    const client = makeClient(url, namespace);
    const jobs = await client.enqueueMany(Array.from({ length: 10 }, () => ({ name: 'record', args: [200] })));
    await expect.poll(() => readLedger(ledger).length, { message: 'node A started a job' }).toBeGreaterThanOrEqual(1);
    a.proc.kill('SIGTERM');
    expect(await a.exited).toEqual({ code: 0, signal: null });
    await makeWorker({ broker: url, namespace, ledger, concurrency: 2 }).start();
    await Promise.all(jobs.map((j) => j.result({ timeout: 60_000 })));
    expect(readLedger(ledger).length).toBe(10); // nothing ran twice
  });

  it('Redis restarted under a running node: it reconnects, re-arms its blocking read and keeps working', async () => {
    const server = await startRedisServer();
    try {
      const namespace = uniqueName('ns');
      await makeWorker({ broker: server.url, namespace }).start();
      const client = makeClient(server.url, namespace);
      expect(await (await client.enqueue('add', [1, 2])).result({ timeout: 20_000 })).toBe(3);
      await server.restart();
      // The node was blocked waiting for work when Redis went away; a job enqueued now must still reach it.
      const after = makeClient(server.url, namespace);
      expect(await (await after.enqueue('add', [2, 2])).result({ timeout: 30_000 })).toBe(4);
    } finally {
      await cleanup();
      await server.stop();
    }
  });

  it(
    'Redis frozen (SIGSTOP) past the lease, then thawed: every job ends with its result, none is dead, the node serves on',
    { timeout: 90_000 },
    async () => {
      const server = await startRedisServer();
      try {
        const namespace = uniqueName('ns');
        const ledger = newLedger();
        const lease = 1_500;
        const concurrency = 2;
        const prefetchMultiplier = 2;
        const worker = makeWorker({ broker: server.url, namespace, ledger, concurrency, prefetchMultiplier, lease });
        await worker.start();
        const client = makeClient(server.url, namespace);
        const jobs = await client.enqueueMany(Array.from({ length: 8 }, () => ({ name: 'record', args: [400] })));
        await expect.poll(() => readLedger(ledger).length, { message: 'the node runs jobs' }).toBeGreaterThanOrEqual(1);
        // Connections stay open and nothing answers; Redis's clock runs on, so every lease it holds runs out.
        server.pause();
        try {
          await new Promise((resolve) => setTimeout(resolve, 2 * lease));
        } finally {
          server.resume();
        }
        expect(await Promise.all(jobs.map((j) => j.result({ timeout: 60_000 })))).toEqual(jobs.map((j) => j.id));
        const after = await client.enqueue('record', [0]);
        expect(await after.result({ timeout: 30_000 })).toBe(after.id);
        const runs = readLedger(ledger).map((r) => r.id);
        expect(new Set(runs)).toEqual(new Set([...jobs, after].map((j) => j.id)));
        // At least once: what ran twice is bounded by what the node held when Redis froze.
        expect(runs.length - jobs.length - 1).toBeLessThanOrEqual(concurrency * prefetchMultiplier);
        await expect.poll(() => worker.stats().unacked, { message: 'every outcome confirmed' }).toBe(0);
        const admin = createBroker(server.url, { namespace, logger: silent });
        await admin.connect();
        try {
          await expect
            .poll(async () => (await admin.counts(['default']))[0], { message: 'the queue is drained, nothing dead' })
            .toMatchObject({ waiting: 0, reserved: 0, delayed: 0, dead: 0 });
        } finally {
          await admin.close();
        }
      } finally {
        await cleanup();
        await server.stop();
      }
    },
  );

  it('Redis stopped mid-run: a warm stop({ deadline }) still ends; what the broker could not confirm is logged with the job ids and dropped', async () => {
    const server = await startRedisServer();
    try {
      const namespace = uniqueName('ns');
      const ledger = newLedger();
      const { log, lines } = captureLog();
      const worker = makeWorker({ broker: server.url, namespace, ledger, concurrency: 1, logger: log });
      await worker.start();
      const client = makeClient(server.url, namespace);
      const [job] = await client.enqueueMany([{ name: 'record', args: [500] }]);
      await expect.poll(() => readLedger(ledger).length, { message: 'the job started' }).toBeGreaterThanOrEqual(1);
      await server.stop();
      // The job finishes, but its ack cannot land: without a deadline this stop never ended.
      const stopping = worker.stop({ deadline: 1_000 });
      expect(
        await Promise.race([
          stopping.then(() => 'stopped'),
          new Promise((resolve) => setTimeout(resolve, 25_000, 'still stopping')),
        ]),
      ).toBe('stopped');
      expect(worker.stats().consumer.succeeded).toBe(1);
      const dropped = lines.find((l) => /did not confirm/.test(String(l.msg)));
      expect(dropped).toMatchObject({ unconfirmed: 1, jobIds: [job!.id], deadlineMs: 1_000 });
    } finally {
      await cleanup();
      await server.stop();
    }
  });

  it('stop({ deadline }) refuses a deadline that is not a duration, naming it', async () => {
    const worker = makeWorker({ broker: `memory://${uniqueName('m')}` });
    await expect(worker.stop({ deadline: 'soon' })).rejects.toThrow(/invalid option deadline: "soon"/);
  });

  it('stop() while its blocking connection is still coming up ends without it: the wait for work is cut short', async () => {
    const proxy = await TcpProxy.start(inject('redisUrl'));
    try {
      const worker = makeWorker({ broker: proxy.url, namespace: uniqueName('ns'), concurrency: 1 });
      await worker.start();
      // From now on Redis holds new connections: the first wait for work opens one, which never comes up.
      proxy.setMode('hold');
      const accepted = proxy.accepted;
      await expect
        .poll(() => proxy.accepted, { message: 'the blocking connection is opened' })
        .toBeGreaterThan(accepted);
      // The stop aborts the wait; it used to end only once the block it then sent had run its course.
      await worker.stop();
      expect(worker.stats().consumer.fetched).toBe(0);
    } finally {
      await cleanup();
      await proxy.close();
    }
  });

  it('stop() while its blocking read is on a connection Redis dropped silently: the stop ends, nothing throws, nothing is logged after it', async () => {
    const proxy = await TcpProxy.start(inject('redisUrl'));
    try {
      const { log, lines } = captureLog();
      // The BLOCK argument of the node's XREADGROUP (the fetch script's source names XREADGROUP too).
      proxy.watch('$5\r\nblock\r\n');
      const worker = makeWorker({ broker: proxy.url, namespace: uniqueName('ns'), concurrency: 1, logger: log });
      await worker.start();
      await expect.poll(() => proxy.sentCount('$5\r\nblock\r\n'), { message: 'the node blocks for work' }).toBe(1);
      // Redis frees the blocked client; the node's side stays open and hears nothing (a dropped idle flow).
      // Its CLIENT UNBLOCK then finds no block (0), and is asked again every 25 ms until the block ends.
      expect(proxy.silenceWhere('prefork:work-wait')).toBe(1);
      await worker.stop();
      // A retry that came after the broker closed threw (the process died of it, after "worker stopped").
      await new Promise((resolve) => setTimeout(resolve, 500));
      const stopped = lines.findIndex((l) => l.msg === 'worker stopped');
      expect(stopped).toBeGreaterThan(-1);
      expect(lines.slice(stopped + 1).filter((l) => Number(l.level) >= 40)).toEqual([]);
    } finally {
      await cleanup();
      await proxy.close();
    }
  });

  it('a command connection gone silent while Redis answers (a dropped flow) is replaced, and the node works on', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const proxy = await TcpProxy.start(url);
    try {
      const { log, lines } = captureLog();
      const worker = makeWorker({ broker: proxy.url, namespace, concurrency: 1, lease: 2000, logger: log });
      await worker.start();
      const client = makeClient(url, namespace);
      expect(await (await client.enqueue('add', [1, 1])).result({ timeout: 30_000 })).toBe(2);
      // Redis forgets the node's command connection; the node's side stays open and hears nothing.
      expect(proxy.silenceWhere('prefork:commands')).toBe(1);
      // Its next fetch, settlement and beat go nowhere: before, they waited for ever (a Worker's calls have no timeout).
      expect(await (await client.enqueue('add', [2, 2])).result({ timeout: 30_000 })).toBe(4);
      expect(lines.some((l) => String(l.msg).startsWith('the Redis connection went silent'))).toBe(true);
      await worker.stop();
    } finally {
      await cleanup();
      await proxy.close();
    }
  });

  it('a busy command connection is never taken for a silent one: under a long drain it is not replaced', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const { log, lines } = captureLog();
    // The shortest lease: its connection is looked at for silence after 1 s of commands waiting unanswered.
    const worker = makeWorker({ broker: url, namespace, concurrency: 2, lease: 1000, logger: log });
    await worker.start();
    const client = makeClient(url, namespace);
    // Several seconds of fetches and settlements back to back: there is nearly always a command in flight.
    const handles = await client.enqueueMany(Array.from({ length: 20_000 }, (_, i) => ({ name: 'add', args: [i, 0] })));
    const results = await Promise.all(handles.map((h) => h.result({ timeout: 120_000 })));
    expect(results).toEqual(handles.map((_, i) => i));
    expect(lines.filter((l) => String(l.msg).startsWith('the Redis connection went silent'))).toEqual([]);
    await worker.stop();
  });

  it('stop() refuses an option it does not know, naming it', async () => {
    const worker = makeWorker({ broker: `memory://${uniqueName('m')}` });
    await expect(worker.stop({ timeout: 5_000 } as never)).rejects.toThrow(
      /invalid option timeout: 5000 \(expected a known stop\(\) option: cold, deadline/,
    );
  });

  it('stop({ deadline }) refuses a deadline too long for a timer (Node would fire it at once and drop every settlement)', async () => {
    const worker = makeWorker({ broker: `memory://${uniqueName('m')}` });
    await expect(worker.stop({ deadline: 2 ** 31 })).rejects.toThrow(
      /invalid option deadline: 2147483648 \(expected at most 2147483647 ms/,
    );
    await expect(worker.stop({ deadline: '30d' })).rejects.toThrow(/invalid option deadline: "30d"/);
  });

  it('Redis absent at start: the worker keeps retrying and starts once Redis is there', async () => {
    const port = await freePort();
    const namespace = uniqueName('ns');
    const worker = makeWorker({ broker: `redis://127.0.0.1:${port}`, namespace });
    let started = false;
    const starting = worker.start().then(() => (started = true));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(started).toBe(false);
    const server = await startRedisServer({ port });
    try {
      await starting;
      const client = makeClient(server.url, namespace);
      expect(await (await client.enqueue('add', [3, 4])).result({ timeout: 20_000 })).toBe(7);
    } finally {
      await cleanup();
      await server.stop();
    }
  });

  it('an ACL user with a password and a db number in the URL; the password is masked everywhere it is shown', async () => {
    const base = new URL(inject('redisUrl'));
    const admin = new Redis(inject('redisUrl'));
    const user = uniqueName('u');
    await admin.call('ACL', 'SETUSER', user, 'on', '>s3cret-pw', '~*', '&*', '+@all');
    try {
      const url = `redis://${user}:s3cret-pw@${base.host}/5`;
      const namespace = uniqueName('ns');
      const worker = makeWorker({ broker: url, namespace });
      expect(worker.broker.displayUrl).toBe(`redis://${user}:***@${base.host}/5`);
      await worker.start();
      const client = makeClient(url, namespace);
      expect(await (await client.enqueue('add', [20, 22])).result({ timeout: 20_000 })).toBe(42);
      await admin.select(5);
      expect((await admin.keys(`*${namespace}*`)).length).toBeGreaterThan(0);
    } finally {
      await cleanup();
      await admin.call('ACL', 'DELUSER', user);
      admin.disconnect();
    }
  });

  it('a wrong password is a clear error naming the broker, with the password masked', async () => {
    const base = new URL(inject('redisUrl'));
    const client = makeClient(`redis://nobody:wrong-pw@${base.host}`, uniqueName('ns'));
    const err = await client.enqueue('add', [1, 1]).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/nobody:\*\*\*@/);
    expect(err?.message).not.toContain('wrong-pw');
  });
});
