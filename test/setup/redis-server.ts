import type { TestProject } from 'vitest/node';
import { startRedisServer } from '../../scripts/redis.mjs';
import './provided.js';

/** One throwaway redis-server for the whole run; tests isolate themselves by namespace. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startRedisServer();
  project.provide('redisUrl', server.url);
  return async () => {
    await server.stop();
  };
}
