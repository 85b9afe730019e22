/**
 * The Broker-interface suites' per-test scope, for a describe run over both
 * implementations: every handle a test opens shares one namespace (and, for
 * memory, one broker name), and all are closed after the test.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, inject } from 'vitest';
import '../setup/provided.js';
import { createBroker } from '../../dist/broker/index.js';
import type { Broker, BrokerOptions } from '../../dist/broker/types.js';
import { silent } from './worker.js';

export interface BrokerScope {
  /** A connected handle on this test's broker. */
  broker: (options?: BrokerOptions) => Promise<Broker>;
  /** Registers node `id` on `queues` through `b`; returns the id. */
  node: (b: Broker, id: string, queues?: string[]) => Promise<string>;
}

/** Call inside the describe; `prefix` names the memory brokers and namespaces of the file. */
export function eachBrokerScope(kind: 'memory' | 'redis', prefix: string): BrokerScope {
  let scope: { url: string; namespace: string } | undefined;
  const open: Broker[] = [];
  afterEach(async () => {
    scope = undefined;
    await Promise.all(open.splice(0).map((b) => b.close()));
  });
  return {
    broker: async (options: BrokerOptions = {}): Promise<Broker> => {
      scope ??= {
        url: kind === 'memory' ? `memory://${prefix}-${randomUUID()}` : inject('redisUrl'),
        namespace: `${prefix}${randomUUID().slice(0, 8)}`,
      };
      const b = createBroker(scope.url, { namespace: scope.namespace, logger: silent, ...options });
      open.push(b);
      await b.connect();
      return b;
    },
    node: async (b: Broker, id: string, queues: string[] = ['q']): Promise<string> => {
      await b.register({
        id,
        name: `${id}@test`,
        host: 'test',
        pid: process.pid,
        queues,
        concurrency: '1',
        startedAt: Date.now(),
      });
      return id;
    },
  };
}
