import type { Redis } from 'ioredis';
import { unpack } from 'msgpackr';
import type { JobLocation, JobRecord } from '../types.js';
import { decodeJob, fieldMap } from './entry-codec.js';
import { GROUP, type Keys } from './keys.js';
import type { Results } from './results.js';
import { callScript } from './scripts.js';
import { outcomeBlob } from './workflows.js';
import { removedFailure } from '../member-failures.js';
import type { StepFailure } from '../types.js';

/** Reads of a job that moved between the index read and the entry read are tried again this often. */
const LOCATE_TRIES = 5;

/** A place in the job index: `<kind>:<ref>:<queue>` (see lib/prelude.lua, "The job index"). */
interface Place {
  raw: string;
  kind: 'q' | 'r' | 'd';
  /** The stream entry id (q, r) or the due time in ms (d). */
  ref: string;
  queue: string;
}

function parsePlace(raw: string): Place | undefined {
  const first = raw.indexOf(':');
  const second = raw.indexOf(':', first + 1);
  if (first !== 1 || second < 0) return undefined;
  const kind = raw[0];
  if (kind !== 'q' && kind !== 'r' && kind !== 'd') return undefined;
  return { raw, kind, ref: raw.slice(2, second), queue: raw.slice(second + 1) };
}

type XPendingRow = [string, string, number, number];

/** A job found (and taken out of its queue when `removed`, with its result stored when one was given). */
export interface TakenJob {
  job: JobRecord;
  location: JobLocation;
  removed: boolean;
}

/**
 * The result to store for a job in the step that takes it out of its queue
 * (a revoke's REVOKED), stored only if the result is still the one `read`
 * (a compare-and-set): taken out by one call and given its result by a
 * later one, the job would be lost if that call never came.
 */
export interface ResultToStore {
  /** The job's stored result as read before (null: none). */
  read: Buffer | null;
  record: Buffer;
  /** ms */
  ttl: number;
  /** The client told that the result is ready ('' none). */
  replyTo: string;
  /** Mark the job ended (a job with its own id: unique.ts addEndedMarks). */
  markEnded: boolean;
}

/** A job read where the job index places it. */
interface Located {
  location: JobLocation;
  place: Place;
  job: JobRecord;
}

/** What a look at one id found: the job, nothing (no job of that id waits or is held), or 'moved' (look again). */
type Look = Located | undefined | 'moved';

/**
 * A take's answer for one id: the job found (see take), undefined (none), the error Redis replied to its
 * removal, or 'changed': its result is not the one its ResultToStore read (nothing done: read it again).
 */
export type Taken = TakenJob | undefined | Error | 'changed';

/**
 * Finds jobs through the job index (`{ns}:jobs`: job id -> its place,
 * kept by every script that moves a job; docs/architecture.md "Where a job
 * is"), then reads the entry there: a stream entry (waiting, or reserved
 * when the group's pending list holds it: XPENDING names the node) or a
 * member of the delayed set. A job that moved between the two reads is
 * looked up again. Many ids are looked at in the same round trips (a
 * workflow's revoke takes thousands): one HMGET, one pipeline of reads,
 * one of removals.
 */
export class JobIndex {
  constructor(
    private readonly keys: Keys,
    private readonly results: Results,
  ) {}

  async locate(redis: Redis, id: string): Promise<JobLocation | undefined> {
    for (let i = 0; i < LOCATE_TRIES; i++) {
      const [found] = await this.look(redis, [id]);
      if (found !== 'moved') return found?.location;
    }
    return undefined;
  }

  /** Takes the job `id` out of its queue or delayed set if it waits there (see take). */
  async removeWaiting(redis: Redis, id: string): Promise<TakenJob | undefined> {
    const found = await this.take(redis, id, removedFailure);
    return found?.removed === true ? found : undefined;
  }

  /**
   * Finds the job `id` and takes it out of its queue or delayed set if it
   * waits there (removed: true); a job a node holds is found, not removed.
   * A workflow's member taken out fails in its workflow with `failure`
   * (why it left), in the same script, which tells the workflow's client
   * if that ended it.
   */
  async take(redis: Redis, id: string, failure: (job: JobRecord) => StepFailure): Promise<TakenJob | undefined> {
    const [taken] = await this.takeMany(redis, [id], failure);
    if (taken instanceof Error) throw taken;
    // 'changed' comes only with a result to store.
    return taken === 'changed' ? undefined : taken;
  }

  /**
   * take for many ids at once, one answer per id in order. A removal Redis
   * refused is that id's answer (an Error), not thrown: the others taken out
   * with it are out of their queues. `store` gives, for the id at an index
   * and its job, the result its removal stores in the same step.
   */
  async takeMany(
    redis: Redis,
    ids: readonly string[],
    failure: (job: JobRecord) => StepFailure,
    store?: (at: number, job: JobRecord) => ResultToStore,
  ): Promise<Taken[]> {
    const out: Taken[] = ids.map(() => undefined);
    /** Found waiting in an earlier round: gone now, it ended meanwhile (or its removal's reply was lost). */
    const seen = new Set<number>();
    let left = ids.map((_, i) => i);
    for (let round = 0; round < LOCATE_TRIES && left.length > 0; round++) {
      const looks = await this.look(
        redis,
        left.map((i) => ids[i] as string),
      );
      const again: number[] = [];
      const waiting: { at: number; found: Located }[] = [];
      looks.forEach((found, x) => {
        const at = left[x] as number;
        if (found === 'moved') again.push(at);
        // Its result may have changed with it (a node's, or this removal's own sent again after a
        // lost reply): a result to store was read before, so it is read again.
        else if (found === undefined) out[at] = store !== undefined && seen.has(at) ? 'changed' : undefined;
        else if (found.location.state === 'reserved')
          out[at] = { job: found.job, location: found.location, removed: false };
        else {
          seen.add(at);
          waiting.push({ at, found });
        }
      });
      const replies = await this.remove(
        redis,
        waiting.map(({ at, found }) => ({ found, store: store?.(at, found.job) })),
        failure,
      );
      waiting.forEach(({ at, found }, x) => {
        const reply = replies[x];
        if (reply instanceof Error) {
          out[at] = reply;
          return;
        }
        const removed = Array.isArray(reply) ? reply[0] : Number(reply);
        if (removed === -2) {
          out[at] = 'changed';
          return;
        }
        // -1: fetched meanwhile (0: moved): look again.
        if (removed !== 1) {
          again.push(at);
          return;
        }
        // Its unique lock went in the same script (removeJob-n.lua), while it held it.
        out[at] = { job: found.job, location: found.location, removed: true };
      });
      left = again;
    }
    return out;
  }

  /** Takes out the entries read (removeJob-n.lua, one call each, in one pipeline); each one's reply or error. */
  private async remove(
    redis: Redis,
    waiting: readonly { found: Located; store: ResultToStore | undefined }[],
    failure: (job: JobRecord) => StepFailure,
  ): Promise<(number | [number, Buffer, Buffer] | Error)[]> {
    if (waiting.length === 0) return [];
    const [, replyPrefix, replyTtl, replyMax] = this.results.scriptStore();
    const pipe = redis.pipeline();
    for (const { found, store } of waiting) {
      const { place, job } = found;
      const id = found.location.id;
      const keys = [
        this.keys.stream(place.queue),
        this.keys.rd(place.queue),
        this.keys.delayed(place.queue),
        this.keys.jobs,
        this.keys.result(id),
        this.keys.endedMark(id),
      ];
      const args: (string | number | Buffer)[] = [id, place.raw, replyPrefix, replyTtl, replyMax];
      if (store === undefined) args.push('', '0', '', 1, '', '0');
      else
        args.push(
          store.record,
          store.read === null ? '0' : '1',
          store.read ?? '',
          store.ttl,
          store.replyTo,
          store.markEnded ? '1' : '0',
        );
      // The entry the script removes is the one read here (its place names it): so is its workflow.
      const flow = job.workflow;
      if (flow !== undefined) {
        keys.push(this.keys.workflow(flow.id));
        for (const q of flow.queues) keys.push(this.keys.stream(q), this.keys.delayed(q));
        const [, blob] = outcomeBlob({ ok: false, failure: failure(job) });
        args.push(flow.id, flow.node, blob);
      }
      callScript(pipe, 'removeJob', keys, args);
    }
    const replies = (await pipe.exec()) ?? [];
    return waiting.map((_, x) => {
      const [err, reply] = replies[x] ?? [new Error('no reply to removeJob')];
      return err ?? (reply as number | [number, Buffer, Buffer]);
    });
  }

  /** Looks at where each id's job is: its place (one HMGET), then its entry there (one pipeline). */
  private async look(redis: Redis, ids: readonly string[]): Promise<Look[]> {
    const raws = await redis.hmget(this.keys.jobs, ...ids);
    const out: Look[] = ids.map(() => undefined);
    const reads: { at: number; place: Place }[] = [];
    const pipe = redis.pipeline();
    ids.forEach((id, at) => {
      const raw = raws[at];
      const place = raw === null || raw === undefined ? undefined : parsePlace(raw);
      if (place === undefined) return;
      reads.push({ at, place });
      if (place.kind === 'd') {
        pipe.callBuffer('ZRANGE', this.keys.delayed(place.queue), place.ref, place.ref, 'BYSCORE');
        return;
      }
      const stream = place.kind === 'r' ? this.keys.rd(place.queue) : this.keys.stream(place.queue);
      pipe.xrangeBuffer(stream, place.ref, place.ref);
      pipe.call('XPENDING', stream, GROUP, place.ref, place.ref, 1);
      pipe.hget(this.keys.jobs, id);
    });
    if (reads.length === 0) return out;
    const replies = (await pipe.exec()) ?? [];
    let next = 0;
    for (const { at, place } of reads) {
      const id = ids[at] as string;
      if (place.kind === 'd') {
        const [err, members] = replies[next++] ?? [];
        if (err) throw err;
        out[at] = readDelayed(id, place, (members ?? []) as Buffer[]);
        continue;
      }
      const [entry, pending, again] = [replies[next++], replies[next++], replies[next++]];
      out[at] = again?.[1] !== place.raw ? 'moved' : readEntry(id, place, entry, pending);
    }
    return out;
  }
}

type Reply = [Error | null, unknown] | undefined;

/** The stream entry at `place` (its XRANGE and XPENDING replies) as a located job, or 'moved' when it is gone. */
function readEntry(id: string, place: Place, entry: Reply, pending: Reply): Located | 'moved' {
  const entries = (entry?.[1] ?? []) as [Buffer, Buffer[]][];
  const first = entries[0];
  if (entry?.[0] || first === undefined) return 'moved';
  const { job } = decodeJob(place.ref, place.queue, first[1]);
  const location: JobLocation = {
    id,
    queue: place.queue,
    state: 'waiting',
    task: job.task,
    attempt: job.attempt,
    redeliveries: job.redeliveries,
    enqueuedAt: job.enqueuedAt,
  };
  // NOGROUP: no node ever read this stream, so nothing is reserved.
  const row = pending?.[0] ? undefined : (pending?.[1] as XPendingRow[] | undefined)?.[0];
  if (row !== undefined) {
    location.state = 'reserved';
    location.nodeId = String(row[1]);
    location.reservedAt = Date.now() - Number(row[2]);
  }
  return { location, place, job };
}

/** The job `id` among the delayed set's `members` due at `place`, or 'moved' when it is not there. */
function readDelayed(id: string, place: Place, members: readonly Buffer[]): Located | 'moved' {
  for (const member of members) {
    const fields = memberFields(member);
    if (fields === undefined) continue;
    const map = fieldMap(fields);
    if (map.get('id')?.toString() !== id) continue;
    const { job } = decodeJob('0-0', place.queue, fields);
    const location: JobLocation = {
      id,
      queue: place.queue,
      state: 'delayed',
      task: job.task,
      attempt: job.attempt,
      redeliveries: job.redeliveries,
      enqueuedAt: job.enqueuedAt,
      dueAt: Number(place.ref),
    };
    // Marked by a rate limit's defer (fetchJobs-n.lua): its turn, or '0' when it asks again then.
    if (map.has('slot')) location.rateLimited = true;
    return { location, place, job };
  }
  return 'moved';
}

/** A delayed set's member (msgpack of the entry's field list, packed by Lua's cmsgpack) as fields. */
function memberFields(member: Buffer): Buffer[] | undefined {
  let decoded: unknown;
  try {
    decoded = unpack(member);
  } catch {
    return undefined;
  }
  if (!Array.isArray(decoded)) return undefined;
  return decoded.map((v: unknown) => (Buffer.isBuffer(v) ? v : Buffer.from(String(v))));
}
