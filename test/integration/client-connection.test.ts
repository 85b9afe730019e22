import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { BrokerOfflineError, BrokerUnavailableError, Client } from 'prefork';
import { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { captureLog } from '../helpers/worker.js';
import { fetchFrom, job, log, redisUrl, registerNode, result, Scope } from './redis-helpers.js';

/** A Client talking to the test Redis through a proxy that can refuse, hold or cut its connections. */
let scope: Scope;
let proxy: TcpProxy;
const clients: Client[] = [];
beforeEach(async () => {
  scope = new Scope();
  proxy = await TcpProxy.start(redisUrl());
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await proxy.close();
  await scope.cleanup();
});

function client(): Client {
  const c = new Client({ broker: proxy.url, namespace: scope.ns, logger: log });
  clients.push(c);
  return c;
}

describe('Client: Redis unreachable at the first call', () => {
  it('fails that call with BrokerUnavailableError, and connects on a later call once Redis is there', async () => {
    proxy.setMode('refuse');
    const c = client();
    await expect(c.enqueue('add', [1, 2])).rejects.toBeInstanceOf(BrokerUnavailableError);
    proxy.setMode('forward');
    const handle = await c.enqueue('add', [1, 2]);
    const worker = await scope.broker();
    expect(await worker.counts(['default'])).toMatchObject([{ waiting: 1 }]);
    expect((await c.getResult(handle.id)) ?? 'none yet').toBe('none yet');
  });
});

describe('Client: Redis lost after the first call', () => {
  it('fails a call it could not send with BrokerOfflineError (nothing applied), and works again once Redis is back', async () => {
    const c = client();
    await c.enqueue('add', [1, 2]);
    const accepted = proxy.accepted;
    proxy.setMode('refuse');
    proxy.dropAll();
    // Reconnecting: the client saw its connection close (a call sent before that may have been applied).
    await vi.waitFor(() => expect(proxy.accepted).toBeGreaterThan(accepted));
    const err = await c.enqueue('add', [3, 4]).then(
      () => undefined,
      (e: unknown) => e,
    );
    // Not ioredis's "Reached the max retries per request limit": named, and a BrokerUnavailableError.
    expect(err).toBeInstanceOf(BrokerOfflineError);
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect(err).toMatchObject({ code: 'PREFORK_BROKER_OFFLINE', url: proxy.url });
    expect((err as Error).message).toMatch(
      /^cannot connect to the broker at redis:\/\/127\.0\.0\.1:\d+: the connection is down \(.+\) and did not come back in time; the call was not sent, so nothing of it was applied$/,
    );
    await expect(c.getResult('anything')).rejects.toBeInstanceOf(BrokerOfflineError);
    proxy.setMode('forward');
    await c.enqueue('add', [5, 6]);
    const worker = await scope.broker();
    // The first and the last: the one not sent was not enqueued.
    expect(await worker.counts(['default'])).toMatchObject([{ waiting: 2 }]);
  });
});

describe('Client: a handle for an id enqueued elsewhere', () => {
  it('keeps polling after its first read failed, and settles once the result is stored', async () => {
    const { log: captured, lines } = captureLog();
    const c = new Client({ broker: proxy.url, namespace: scope.ns, logger: captured });
    clients.push(c);
    expect(await c.getResult('nothing')).toBeUndefined();
    const worker = await scope.broker();
    await registerNode(worker, 'n', ['default']);
    const foreign = job('default');
    await worker.enqueue([foreign]);

    proxy.setMode('refuse');
    proxy.dropAll();
    const logged = (what: string, match: (l: Record<string, unknown>) => boolean): Promise<void> =>
      vi.waitFor(() => expect(lines.some((l) => String(l.msg).includes(what) && match(l))).toBe(true), {
        timeout: 10_000,
        interval: 20,
      });
    // Once the client knows Redis is away, the first read of the result fails (it is not held for a reconnect).
    await logged('connection lost', (l) => l.connection === 'prefork:commands');
    const waiting = c.handle(foreign.id).result({ timeout: '10s' });
    waiting.catch(() => undefined);
    await logged('could not read', (l) => l.jobId === foreign.id);
    const [d] = (await fetchFrom(worker, 'n', ['default'], 1)).deliveries;
    await worker.settle([{ kind: 'ack', delivery: d!, result: result(d!, 'SUCCESS', 3) }]);
    proxy.setMode('forward');
    expect(await waiting).toBe(3);
  });
});

describe('RedisBroker: close() while connect() is in progress', () => {
  it('leaves no connection open, and connect() rejects', async () => {
    proxy.setMode('hold');
    const broker = new RedisBroker(proxy.url, { namespace: scope.ns, logger: log });
    const connecting = broker.connect();
    connecting.catch(() => undefined);
    await vi.waitFor(() => expect(proxy.open).toBe(1));
    await broker.close();
    proxy.setMode('forward');
    await expect(connecting).rejects.toThrow(/closed/);
    await expect.poll(() => proxy.open, { timeout: 5_000 }).toBe(0);
  });
});

/**
 * close() while the Client's read of results waits on a timer: timers are
 * faked and never advanced after close(), so close() can only resolve if it
 * cuts the wait short instead of sitting it out.
 */
describe('Client.close() while Redis is away', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A logger, and a promise for the first line containing `what` (no polling: timers are fake). */
  function watchLog(): { log: Logger; seen: (what: string) => Promise<void> } {
    const lines: string[] = [];
    const watchers: { what: string; found: () => void }[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        for (const w of watchers) if (chunk.toString().includes(w.what)) w.found();
        done();
      },
    });
    const seen = (what: string): Promise<void> =>
      lines.some((l) => l.includes(what))
        ? Promise.resolve()
        : new Promise((resolve) => watchers.push({ what, found: resolve }));
    return { log: pino({ level: 'warn' }, stream), seen };
  }

  it('ends the pause after a failed read at once', { timeout: 10_000 }, async () => {
    const { log: watched, seen } = watchLog();
    const c = new Client({ broker: proxy.url, namespace: scope.ns, logger: watched });
    clients.push(c);
    const handle = await c.enqueue('add');
    proxy.setMode('refuse');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const waiting = handle.result();
    waiting.catch(() => undefined);
    await seen('waiting for results failed');
    await c.close();
    await expect(waiting).rejects.toMatchObject({ code: 'PREFORK_CLIENT_CLOSED' });
  });

  it('ends a wait for the connection to come back at once', { timeout: 10_000 }, async () => {
    const { log: watched, seen } = watchLog();
    const c = new Client({ broker: proxy.url, namespace: scope.ns, logger: watched });
    clients.push(c);
    const handle = await c.enqueue('add');
    proxy.watch('BLMPOP');
    const waiting = handle.result();
    waiting.catch(() => undefined);
    await vi.waitFor(() => expect(proxy.sentCount('BLMPOP')).toBe(1));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    proxy.setMode('refuse');
    proxy.dropAll();
    await seen('"connection":"prefork:result-wait"');
    // A socket's 'close' follows its 'error' within the same turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    // The read's slice runs out while Redis is away, and a reconnect attempt is refused: the
    // next read waits for a connection that is between attempts (no timer will fire again).
    const refused = proxy.nextAccept();
    await vi.advanceTimersByTimeAsync(6_000);
    await refused;
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    await c.close();
    await expect(waiting).rejects.toMatchObject({ code: 'PREFORK_CLIENT_CLOSED' });
  });
});
