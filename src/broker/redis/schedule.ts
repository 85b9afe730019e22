import type { Redis } from 'ioredis';
import type {
  ClaimOutcome,
  ClaimReply,
  LeaderLease,
  PublishReply,
  ScheduleDefinition,
  ScheduleState,
  TickClaim,
} from '../types.js';
import { encodeJob } from './entry-codec.js';
import type { Keys } from './keys.js';
import { refusal } from './reply-errors.js';
import { callScript } from './scripts.js';

const OUTCOMES = new Map<number, ClaimOutcome>([
  [1, 'claimed'],
  [2, 'stale'],
  [3, 'early'],
  [4, 'unknown'],
]);

/**
 * Schedule entries in Redis: a HASH per entry (`{ns}:sched:<name>`: its
 * definition, its hash and the latest tick handled) and the SET of names.
 * Ticks are claimed by claimTicks-n.lua, which enqueues their jobs in the
 * same step and records them in the job index, as an enqueue does.
 */
export class ScheduleStore {
  constructor(private readonly keys: Keys) {}

  async publish(redis: Redis, entries: readonly ScheduleDefinition[]): Promise<PublishReply> {
    const keys = [this.keys.schedules, ...entries.map((e) => this.keys.scheduleEntry(e.name))];
    const args = entries.flatMap((e) => [e.name, e.hash, e.definition, e.since === undefined ? '' : e.since]);
    const [now, states] = (await callScript(redis, 'publishSchedule', keys, args)) as [number, [Buffer, Buffer][]];
    const skew = now - Date.now();
    return {
      skew,
      states: entries.map((e, i) => {
        const [hash, last] = states[i] ?? [];
        return { name: e.name, hash: hash?.toString() ?? '', last: Number(last?.toString()) };
      }),
    };
  }

  async claim(redis: Redis, claims: readonly TickClaim[]): Promise<ClaimReply> {
    const keys = [this.keys.queues, this.keys.jobs];
    const args: (string | number | Buffer)[] = [claims.length];
    for (const c of claims) {
      const queue = c.jobs[0]?.queue ?? 'default';
      keys.push(this.keys.scheduleEntry(c.name), this.keys.stream(queue));
      const lastTick = c.jobs.at(-1)?.scheduledFor;
      args.push(c.hash, c.expectedLast, c.newLast, lastTick === undefined ? '' : lastTick, queue, c.jobs.length);
      for (const job of c.jobs) {
        const fields = encodeJob(job);
        for (let i = 1; i < fields.length; i += 2) args.push(fields[i] as string | Buffer);
      }
    }
    const [now, replies] = (await callScript(redis, 'claimTicks', keys, args)) as [
      number,
      [number, Buffer | number, Buffer, Buffer][],
    ];
    const skew = now - Date.now();
    return {
      skew,
      results: claims.map((c, i) => {
        const [status, last, hash, definition] = replies[i] ?? [4, 0, Buffer.alloc(0), Buffer.alloc(0)];
        const outcome = OUTCOMES.get(status) ?? 'unknown';
        if (outcome === 'unknown') return { outcome };
        const state: ScheduleState = { name: c.name, hash: hash.toString(), last: Number(last.toString()) };
        if (definition.length > 0) state.definition = definition.toString();
        return { outcome, state };
      }),
    };
  }

  async list(redis: Redis): Promise<ScheduleState[]> {
    const names = (await redis.smembers(this.keys.schedules)).sort();
    if (names.length === 0) return [];
    const pipe = redis.pipeline();
    for (const name of names) pipe.hgetall(this.keys.scheduleEntry(name));
    const replies = (await pipe.exec()) ?? [];
    const states: ScheduleState[] = [];
    names.forEach((name, i) => {
      const [err, raw] = replies[i] ?? [null, null];
      // An entry another program wrote over is named, not left out of the list as if dropped.
      if (err) throw refusal('the read of the schedule', err, ` (${this.keys.scheduleEntry(name)} is not a hash)`);
      const h = raw as Record<string, string> | null;
      if (h === null || h.hash === undefined) return; // dropped meanwhile
      const state: ScheduleState = { name, hash: h.hash, last: Number(h.last), definition: h.def ?? '' };
      if (h.lastTick !== undefined && h.lastTick !== '') state.lastTick = Number(h.lastTick);
      if (h.lastRunAt !== undefined) state.lastRunAt = Number(h.lastRunAt);
      if (h.lastJob !== undefined) state.lastJobId = h.lastJob;
      states.push(state);
    });
    return states;
  }

  /** dropUnusedSchedule-3.lua: the entries no live node registered, dropped while `leader` holds the lease. */
  async dropUnused(redis: Redis, leader: LeaderLease): Promise<string[]> {
    const keys = [this.keys.schedules, this.keys.nodes, this.keys.leader];
    const args = [leader.nodeId, leader.token, this.keys.node(''), this.keys.scheduleEntry('')];
    const dropped = (await callScript(redis, 'dropUnusedSchedule', keys, args)) as Buffer[];
    return dropped.map((name) => name.toString());
  }

  async drop(redis: Redis, names: readonly string[]): Promise<number> {
    if (names.length === 0) return 0;
    const replies = await redis
      .multi()
      .del(...names.map((n) => this.keys.scheduleEntry(n)))
      .srem(this.keys.schedules, ...names)
      .exec();
    return Number(replies?.[0]?.[1] ?? 0);
  }
}
