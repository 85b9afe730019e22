import type { Redis } from 'ioredis';
import { pausedFromMember, pausedMember, sortPaused } from '../paused-queues.js';
import type { PausedQueue } from '../types.js';
import type { Keys } from './keys.js';
import { callScript } from './scripts.js';

/** Paused queues: one SET under the namespace's hash tag, read by a node when it registers. */
export class Pauses {
  constructor(private readonly keys: Keys) {}

  async pause(redis: Redis, queue: string, node: string | undefined): Promise<boolean> {
    return (await redis.sadd(this.keys.paused, pausedMember(queue, node))) === 1;
  }

  async resume(redis: Redis, queue: string, node: string | undefined): Promise<number> {
    return Number(await callScript(redis, 'resumeQueue', [this.keys.paused], [queue, node ?? '']));
  }

  async list(redis: Redis): Promise<PausedQueue[]> {
    return sortPaused((await redis.smembers(this.keys.paused)).map(pausedFromMember));
  }
}
