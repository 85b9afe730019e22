import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pack } from 'msgpackr';
import { pino } from 'pino';
import { afterEach, beforeEach, inject } from 'vitest';
import '../setup/provided.js';
import { RedisBroker } from '../../dist/broker/redis/redis-broker.js';
import type { Broker, BrokerOptions, Delivery, FetchReply, NewJob, ResultRecord } from '../../dist/broker/types.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

/** Quiet logs in tests (raise with PREFORK_TEST_LOG=debug). */
export const log = pino({ level: process.env.PREFORK_TEST_LOG ?? 'silent' });

export function redisUrl(): string {
  return inject('redisUrl');
}

/** A random namespace per test, a raw client to look at keys, and cleanup of both. */
export class Scope {
  readonly ns = `t${randomUUID().slice(0, 8)}`;
  readonly tag = `{${this.ns}}`;
  readonly raw: Redis;
  private readonly brokers: RedisBroker[] = [];
  private readonly proxies: TcpProxy[] = [];

  constructor(readonly url = redisUrl()) {
    this.raw = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  }

  async broker(options: BrokerOptions = {}, url = this.url): Promise<RedisBroker> {
    const b = new RedisBroker(url, { namespace: this.ns, logger: log, ...options });
    this.brokers.push(b);
    await b.connect();
    return b;
  }

  /** A broker of this scope that reaches Redis through a proxy the test can cut, hold or refuse. */
  async brokerThroughProxy(options: BrokerOptions = {}): Promise<{ proxy: TcpProxy; broker: RedisBroker }> {
    const proxy = await TcpProxy.start(this.url);
    this.proxies.push(proxy);
    return { proxy, broker: await this.broker(options, proxy.url) };
  }

  key(suffix: string): string {
    return `${this.tag}:${suffix}`;
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.brokers.map((b) => b.close().catch(() => undefined)));
    await Promise.all(this.proxies.map((p) => p.close()));
    for (const pattern of [`${this.tag}:*`, `${this.ns}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await this.raw.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        if (keys.length > 0) await this.raw.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
    this.raw.disconnect();
  }
}

/**
 * Call at a test file's top level: a maker of scopes, each with a broker on
 * which node n1 is registered on queue q, cleaned up after its test.
 */
export function nodeScopes(): () => Promise<{ b: RedisBroker; raw: Redis; namespace: string }> {
  const scopes: Scope[] = [];
  afterEach(async () => {
    await Promise.all(scopes.splice(0).map((s) => s.cleanup()));
  });
  return async () => {
    const scope = new Scope();
    scopes.push(scope);
    const b = await scope.broker();
    await registerNode(b, 'n1', ['q']);
    return { b, raw: scope.raw, namespace: scope.ns };
  };
}

export function job(queue: string, overrides: Partial<NewJob> = {}): NewJob {
  return {
    id: randomUUID(),
    task: 'add',
    queue,
    payload: pack([1, 2]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: Date.now(),
    ...overrides,
  };
}

export function ids(deliveries: readonly Delivery[]): string[] {
  return deliveries.map((d) => d.job.id);
}

export function fetchFrom(
  broker: RedisBroker,
  nodeId: string,
  queues: string[] | { queue: string; quota: number }[],
  count: number,
): Promise<FetchReply> {
  const plan = queues.map((q) => (typeof q === 'string' ? { queue: q, quota: count } : q));
  return broker.fetch({ nodeId, plan, count, settle: [] });
}

export function result(d: Delivery, state: ResultRecord['state'], value?: unknown): ResultRecord {
  return {
    id: d.job.id,
    task: d.job.task,
    queue: d.queue,
    state,
    value,
    retries: d.job.attempt,
    finishedAt: Date.now(),
  };
}

/** Registers node `id` (named `id@test`) on `queues`, through either broker. */
export async function registerNode(broker: Pick<Broker, 'register'>, id: string, queues: string[]): Promise<void> {
  await broker.register({
    id,
    name: `${id}@test`,
    host: 'test',
    pid: process.pid,
    queues,
    concurrency: '1',
    startedAt: Date.now(),
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Per test: a fresh Scope and a broker with `nodeId` registered on `queues`
 * (handed to `use`), cleaned up after the test.
 */
export function eachNode(queues: string[], use: (scope: Scope, broker: RedisBroker) => void, nodeId = 'node-a'): void {
  let current: Scope | undefined;
  beforeEach(async () => {
    current = new Scope();
    const broker = await current.broker();
    await registerNode(broker, nodeId, queues);
    use(current, broker);
  });
  afterEach(async () => {
    await current?.cleanup();
  });
}
