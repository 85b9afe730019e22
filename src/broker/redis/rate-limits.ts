import type { Redis } from 'ioredis';
import { DEFAULT_RATE, rateSetting } from '../rate-setting.js';
import type { SlotGrant, SlotRequest } from '../types.js';
import type { Keys } from './keys.js';
import { callScript } from './scripts.js';

/** acquireSlots-n.lua's reply: per request, first delay, interval, rate set at run time ('' = none). */
type SlotsReply = [Buffer, Buffer, Buffer][];

/**
 * Cluster-wide rate limits on Redis: a bucket per task (acquireSlots-n.lua),
 * and the rates set at run time in one HASH that the bucket script reads
 * (setRateLimit-n.lua also spaces again the jobs already waiting their turn).
 */
export class RateLimits {
  constructor(private readonly keys: Keys) {}

  async acquire(redis: Redis, requests: readonly SlotRequest[]): Promise<SlotGrant[]> {
    if (requests.length === 0) return [];
    const keys = [this.keys.rateLimits, ...requests.map((r) => this.keys.rateBucket(r.task))];
    const args: (string | number)[] = [];
    for (const r of requests) args.push(r.task, r.intervalMs, Math.max(1, Math.floor(r.count)));
    const reply = (await callScript(redis, 'acquireSlots', keys, args)) as SlotsReply;
    return reply.map(([first, interval, override]) => {
      const rate = override.toString();
      return {
        firstDelayMs: Number(first.toString()),
        intervalMs: Number(interval.toString()),
        override: rate === '' ? undefined : rate,
      };
    });
  }

  async list(redis: Redis): Promise<Map<string, string>> {
    const all = await redis.hgetall(this.keys.rateLimits);
    const out = new Map<string, string>();
    for (const [task, value] of Object.entries(all)) {
      const rate = / (.*)$/.exec(value)?.[1];
      if (rate !== undefined) out.set(task, rate);
    }
    return out;
  }

  async set(redis: Redis, task: string, rate: string): Promise<number> {
    const setting = rateSetting(task, rate);
    const keys = [this.keys.rateLimits, this.keys.rateBucket(task), this.keys.jobs, this.keys.nodes];
    // "default": the override goes; the jobs waiting keep the turns they hold (the broker knows no task's own limit).
    if (setting === undefined) return Number(await callScript(redis, 'setRateLimit', keys, [task, '', DEFAULT_RATE]));
    const { interval, text } = setting;
    const queues = await redis.smembers(this.keys.queues);
    for (const q of queues) keys.push(this.keys.delayed(q), this.keys.stream(q));
    return Number(await callScript(redis, 'setRateLimit', keys, [task, interval, text]));
  }
}
