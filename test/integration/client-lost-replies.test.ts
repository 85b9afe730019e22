import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client, ResultGoneError, type JobHandle } from 'prefork';
import { createBroker, type Broker } from 'prefork/broker';
import { Keys } from '../../dist/broker/redis/keys.js';
import type { Delivery, ResultRecord } from '../../dist/broker/types.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { captureLog } from '../helpers/worker.js';
import { log, redisUrl, Scope } from './redis-helpers.js';

/**
 * Announcements lost on the way to a Client: the ids its blocking read popped
 * from its reply list never reach it (the reply was lost with the connection,
 * or the read of their results failed after the pop). The Client talks to the
 * test Redis through a TCP proxy; a worker is played by a broker connected
 * directly, which fetches the job and settles it with a result.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Registers node `n` on the default queue, to play a worker. */
async function register(worker: Broker): Promise<void> {
  await worker.register({
    id: 'n',
    name: 'n@test',
    host: 'test',
    pid: process.pid,
    queues: ['default'],
    concurrency: '1',
    startedAt: Date.now(),
  });
}

/** `GET <key>` in RESP: a read of a stored result (not CONFIG GET, which a broker sends when it connects). */
const GET = '*2\r\n$3\r\nGET\r\n';

async function setup(): Promise<{
  scope: Scope;
  proxy: TcpProxy;
  worker: Broker;
  finish: (value: unknown) => Promise<void>;
}> {
  const scope = new Scope();
  cleanups.push(() => scope.cleanup());
  const proxy = await TcpProxy.start(redisUrl());
  cleanups.push(() => proxy.close());
  proxy.watch('BLMPOP');
  proxy.watch(GET);
  const worker = await scope.broker();
  await register(worker);
  const finish = async (value: unknown): Promise<void> => {
    const reply = await worker.fetch({ nodeId: 'n', plan: [{ queue: 'default', quota: 1 }], count: 1, settle: [] });
    const d = reply.deliveries[0] as Delivery;
    const result: ResultRecord = {
      id: d.job.id,
      task: d.job.task,
      queue: d.queue,
      state: 'SUCCESS',
      value,
      retries: 0,
    };
    await worker.settle([{ kind: 'ack', delivery: d, result }]);
  };
  return { scope, proxy, worker, finish };
}

function client(url: string, namespace: string, logger = log): Client {
  const c = new Client({ broker: url, namespace, logger });
  cleanups.push(() => c.close());
  return c;
}

/**
 * Waits until the Client blocks on its reply list. A handle waited for just
 * after its enqueue takes no first look at the stored result: its
 * announcement is all it waits for.
 */
async function waitingOnReplies(proxy: TcpProxy, handle: JobHandle): Promise<{ waiting: Promise<unknown> }> {
  const waiting = handle.result({ timeout: '15s' });
  waiting.catch(() => undefined);
  await vi.waitFor(() => expect(proxy.sentCount('BLMPOP')).toBeGreaterThanOrEqual(1));
  expect(proxy.sentCount(GET)).toBe(0);
  return { waiting };
}

describe('Client: a reply-list read lost on the way', () => {
  it('settles the waiter when the reply to its blocking read is lost with the connection', async () => {
    const { scope, proxy, finish } = await setup();
    const c = client(proxy.url, scope.ns);
    const handle = await c.enqueue('add');
    const { waiting } = await waitingOnReplies(proxy, handle);
    // The first reply naming the job is the blocking read's: Redis popped the id, the Client never hears of it.
    const swallowed = proxy.swallowReply(handle.id);
    await finish('done');
    await swallowed;
    expect(await waiting).toBe('done');
  });

  it('loses nothing to a blocking read that a dead connection left running in Redis', async () => {
    const { scope, proxy, finish } = await setup();
    const c = client(proxy.url, scope.ns);
    const handle = await c.enqueue('add');
    const { waiting } = await waitingOnReplies(proxy, handle);
    // The Client's blocking connection dies; Redis does not notice, and its BLMPOP stays blocked there.
    expect(proxy.abandonWhere('prefork:result-wait')).toBe(1);
    await vi.waitFor(() => expect(proxy.sentCount('BLMPOP')).toBe(2));
    await finish('done');
    expect(await waiting).toBe('done');
  });

  it('settles the waiter when the read of the results fails after the pop', async () => {
    const { scope, proxy, finish } = await setup();
    const { log: captured, lines } = captureLog();
    const logged = (what: string, connection?: string): Promise<void> =>
      vi.waitFor(
        () =>
          expect(
            lines.some(
              (l) => String(l.msg).includes(what) && (connection === undefined || l.connection === connection),
            ),
          ).toBe(true),
        { timeout: 10_000, interval: 20 },
      );
    const c = client(proxy.url, scope.ns, captured);
    const handle = await c.enqueue('add');
    const { waiting } = await waitingOnReplies(proxy, handle);
    // The command connection goes (the blocking one stays), and Redis stays away for it.
    proxy.setMode('refuse');
    expect(proxy.dropWhere('prefork:commands')).toBe(1);
    await logged('connection lost', 'prefork:commands');
    // Too large to ride in its announcement: the id is announced, and its result read back.
    const large = 'done'.repeat(2_000);
    await finish(large);
    // The blocking read pops the id; reading its result fails.
    await logged('waiting for results failed');
    proxy.setMode('forward');
    expect(await waiting).toBe(large);
  });
});

describe.each(['redis', 'memory'] as const)('Client on %s: an announced result that is gone', (kind) => {
  it('fails its waiter with ResultGoneError naming the job', async () => {
    let url: string;
    let namespace: string;
    let worker: Broker;
    let evict: (id: string) => Promise<void>;
    if (kind === 'redis') {
      const scope = new Scope();
      cleanups.push(() => scope.cleanup());
      ({ ns: namespace, url } = scope);
      worker = await scope.broker();
      // As Redis evicts a key under maxmemory.
      evict = async (id) => void (await scope.raw.del(new Keys(namespace).result(id)));
    } else {
      url = `memory://result-gone-${randomUUID()}`;
      namespace = 'prefork';
      // Results this handle stores expire after 1 ms.
      worker = createBroker(url, { logger: log, resultTtl: 1 });
      await worker.connect();
      cleanups.push(() => worker.close());
      evict = () => Promise.resolve();
    }
    await register(worker);
    const c = client(url, namespace);
    const [gone, kept] = await c.enqueueMany([{ name: 'add' }, { name: 'add' }]);
    const reply = await worker.fetch({ nodeId: 'n', plan: [{ queue: 'default', quota: 2 }], count: 2, settle: [] });
    const [first, second] = reply.deliveries as [Delivery, Delivery];
    const result = (d: Delivery, value: unknown = d.job.id): ResultRecord => ({
      id: d.job.id,
      task: d.job.task,
      queue: d.queue,
      state: 'SUCCESS',
      value,
      retries: 0,
    });
    // Too large to ride in its announcement (a small one would reach its waiter whatever became of the stored copy).
    await worker.settle([{ kind: 'ack', delivery: first, result: result(first, 'gone'.repeat(2_000)) }]);
    // The second result, stored for long, keeps the reply list alive (it expires as a whole with its newest id).
    const lasting = kind === 'redis' ? worker : createBroker(url, { logger: log });
    if (lasting !== worker) cleanups.push(() => lasting.close());
    await lasting.settle([{ kind: 'ack', delivery: second, result: result(second) }]);
    await evict(gone!.id);
    await vi.waitFor(async () => expect(await c.getResult(gone!.id)).toBeUndefined());

    const err = await gone!.result({ timeout: '10s' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResultGoneError);
    expect(err).toMatchObject({ code: 'PREFORK_RESULT_GONE', jobId: gone!.id });
    expect((err as Error).message).toContain(gone!.id);
    expect(await kept!.result({ timeout: '10s' })).toBe(kept!.id);
  });
});
