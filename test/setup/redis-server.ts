import type { TestProject } from 'vitest/node';
// @ts-expect-error plain ESM helper shared with the benches (no type declarations)
import { startRedisServer } from '../../scripts/redis.mjs';
import './provided.js';

interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

/** One throwaway redis-server for the whole run; tests isolate themselves by namespace. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = (await startRedisServer()) as RedisServer;
  project.provide('redisUrl', server.url);
  return async () => {
    await server.stop();
  };
}
