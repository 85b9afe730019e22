/**
 * A redis-server of a test's own: for settings that are server-wide
 * (proto-max-bulk-len, maxmemory) and for a server a test fills up or
 * freezes, which the shared one of the test setup must never be. Started
 * before each test on a free loopback port, with a plain connection to it;
 * after the test, the workers and clients it made are stopped (cleanup())
 * before the server is.
 */
import { Redis } from 'ioredis';
import { afterEach, beforeEach } from 'vitest';
import { startRedisServer, type RedisServer } from '../../scripts/redis.mjs';
import { cleanup } from './worker.js';

export interface OwnRedis {
  /** This test's server. */
  readonly server: RedisServer;
  /** A plain ioredis connection to it. */
  readonly raw: Redis;
}

/**
 * Registers the hooks; the returned object's fields are this test's.
 * `beforeCleanup` runs first after each test, while the server still runs
 * (e.g. to lift a maxmemory the workers could not stop under).
 */
export function ownRedisPerTest(options: { beforeCleanup?: (raw: Redis) => Promise<unknown> } = {}): OwnRedis {
  let server: RedisServer | undefined;
  let raw: Redis | undefined;
  beforeEach(async () => {
    server = await startRedisServer();
    raw = new Redis(server.url);
  });
  afterEach(async () => {
    // A test that froze its server thaws it first, or nothing below could end.
    server?.resume();
    if (raw !== undefined) await options.beforeCleanup?.(raw);
    await cleanup();
    raw?.disconnect();
    await server?.stop();
    server = undefined;
    raw = undefined;
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('ownRedisPerTest(): the server is started before each test only');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get raw() {
      return started(raw);
    },
  };
}
