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
import { parseInteger } from '../../util/units.js';
import { encodeJob } from './entry-codec.js';
import type { Keys } from './keys.js';
import { isWrongType } from './reply-errors.js';
import { callScript } from './scripts.js';

const OUTCOMES = new Map<number, ClaimOutcome>([
  [1, 'claimed'],
  [2, 'stale'],
  [3, 'early'],
  [4, 'unknown'],
  [5, 'refused'],
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
        // A refused claim's reply names the type its queue's key holds where a definition would be.
        if (outcome === 'refused') {
          const key = this.keys.stream(c.jobs[0]?.queue ?? 'default');
          return { outcome, state, reason: `${key} is a ${definition.toString()}, not a stream: no job enqueued` };
        }
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
      if (err) {
        if (!isWrongType(err)) throw err;
        states.push({ name, hash: '', last: 0, definition: '', damaged: 'its key holds another type than a hash' });
        return;
      }
      const h = raw as Record<string, string> | null;
      if (h === null || Object.keys(h).length === 0) return; // dropped meanwhile
      states.push(stateOf(name, h));
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

/** The latest a Date can be (epoch ms): a later "time" is no time. */
const MAX_DATE_MS = 8.64e15;

/**
 * An entry's hash as listSchedule reads it. The scripts write its times as
 * whole epoch ms; one that is not (another program wrote it) is left out and
 * named in `damaged`, so a reader neither shows nor computes from it.
 */
function stateOf(name: string, h: Record<string, string>): ScheduleState {
  const damage: string[] = [];
  const time = (field: string): number | undefined => {
    const text = h[field];
    if (text === undefined) return undefined;
    const ms = parseInteger(text);
    if (ms !== undefined && ms <= MAX_DATE_MS) return ms;
    damage.push(`${field} ${JSON.stringify(text)} is not a time`);
    return undefined;
  };
  if (h.def === undefined) damage.push('it has no definition');
  if (h.hash === undefined) damage.push('it has no definition hash');
  if (h.last === undefined) damage.push('it has no latest tick');
  const state: ScheduleState = { name, hash: h.hash ?? '', last: time('last') ?? 0, definition: h.def ?? '' };
  // An empty lastTick reads as none, as it always has.
  const lastTick = h.lastTick === '' ? undefined : time('lastTick');
  if (lastTick !== undefined) state.lastTick = lastTick;
  const lastRunAt = time('lastRunAt');
  if (lastRunAt !== undefined) state.lastRunAt = lastRunAt;
  if (h.lastJob !== undefined) state.lastJobId = h.lastJob;
  if (damage.length > 0) state.damaged = damage.join('; ');
  return state;
}
