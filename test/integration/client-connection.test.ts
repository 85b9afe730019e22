import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BrokerUnavailableError, Client } from 'prefork';
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
