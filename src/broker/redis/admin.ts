import type { Redis } from 'ioredis';
import type { DeadJob, QueueCounts } from '../types.js';
import { decodeJob, entryTime } from './entry-codec.js';
import { GROUP, type Keys } from './keys.js';
import { callScript } from './scripts.js';

/**
 * Inspection and maintenance of queues. Counts: acked entries are deleted,
 * so a stream holds exactly the reserved entries (the group's pending list)
 * and the waiting ones: waiting = XLEN − pending over the stream and its :rd.
 */
export class Admin {
  constructor(private readonly keys: Keys) {}

  async knownQueues(redis: Redis): Promise<string[]> {
    return (await redis.smembers(this.keys.queues)).sort();
  }

  async counts(redis: Redis, queues: readonly string[]): Promise<QueueCounts[]> {
    const pipe = redis.pipeline();
    for (const q of queues) {
      pipe.xlen(this.keys.stream(q)).xlen(this.keys.rd(q));
      pipe.xpending(this.keys.stream(q), GROUP).xpending(this.keys.rd(q), GROUP);
      pipe.zcard(this.keys.delayed(q)).xlen(this.keys.dead(q));
    }
    const replies = (await pipe.exec()) ?? [];
    const num = (i: number): number => {
      const [err, value] = replies[i] ?? [null, 0];
      if (err) return 0; // NOGROUP: no node read the queue yet
      if (Array.isArray(value)) return Number(value[0] ?? 0);
      return Number(value ?? 0);
    };
    return queues.map((queue, qi) => {
      const b = qi * 6;
      const reserved = num(b + 2) + num(b + 3);
      return { queue, waiting: Math.max(0, num(b) + num(b + 1) - reserved), reserved, delayed: num(b + 4), dead: num(b + 5) };
    });
  }

  async purge(redis: Redis, queue: string): Promise<number> {
    return Number(await callScript(redis, 'purgeQueue', [this.keys.stream(queue), this.keys.rd(queue), this.keys.delayed(queue)], []));
  }

  async listDead(redis: Redis, queue: string, limit: number): Promise<DeadJob[]> {
    if (limit <= 0) return [];
    const entries = (await redis.callBuffer('XREVRANGE', this.keys.dead(queue), '+', '-', 'COUNT', limit)) as [Buffer, Buffer[]][];
    return entries.map(([rawId, fields]) => {
      const id = rawId.toString();
      const { job } = decodeJob(id, queue, fields);
      let reason = '';
      let diedAt = entryTime(id);
      for (let i = 0; i + 1 < fields.length; i += 2) {
        const name = fields[i]!.toString();
        if (name === 'reason') reason = fields[i + 1]!.toString();
        if (name === 'diedAt') diedAt = Number(fields[i + 1]!.toString()) || diedAt;
      }
      return { job, reason, diedAt };
    });
  }

  async retryDead(redis: Redis, queue: string, ids: readonly string[] | undefined): Promise<number> {
    if (ids !== undefined && ids.length === 0) return 0;
    const args = ids === undefined ? ['1'] : ['0', ...ids];
    return Number(await callScript(redis, 'retryDead', [this.keys.dead(queue), this.keys.stream(queue)], args));
  }

  async purgeDead(redis: Redis, queue: string): Promise<number> {
    const replies = (await redis.multi().xlen(this.keys.dead(queue)).del(this.keys.dead(queue)).exec()) ?? [];
    const [err, n] = replies[0] ?? [null, 0];
    if (err) throw err;
    return Number(n);
  }
}
