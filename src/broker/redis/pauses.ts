import type { Redis } from 'ioredis';
import { pausedFromMember, pausedMember, sortPaused } from '../paused-queues.js';
import type { PausedQueue } from '../types.js';
import type { Keys } from './keys.js';
import { callScript } from './scripts.js';

/** Paused queues: one SET under the namespace's hash tag, read by a node when it registers and after a change flagged its lease. */
export class Pauses {
  constructor(private readonly keys: Keys) {}

  async pause(redis: Redis, queue: string, node: string | undefined): Promise<boolean> {
    const added = await callScript(
      redis,
      'pauseQueue',
      [this.keys.paused, this.keys.nodes],
      [pausedMember(queue, node)],
    );
    return Number(added) === 1;
  }

  async resume(redis: Redis, queue: string, node: string | undefined): Promise<number> {
    return Number(await callScript(redis, 'resumeQueue', [this.keys.paused, this.keys.nodes], [queue, node ?? '']));
  }

  async list(redis: Redis): Promise<PausedQueue[]> {
    return sortPaused((await redis.smembers(this.keys.paused)).map(pausedFromMember));
  }
}
