import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BrokerUnavailableError, Client } from 'prefork';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { log, redisUrl, Scope } from './redis-helpers.js';

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
