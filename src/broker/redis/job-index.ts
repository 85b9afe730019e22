import type { Redis } from 'ioredis';
import { unpack } from 'msgpackr';
import type { JobLocation, JobRecord } from '../types.js';
import { decodeJob, fieldMap } from './entry-codec.js';
import { GROUP, type Keys } from './keys.js';
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

/** A job found (and taken out of its queue when `removed`); `ended`: the workflow its removal ended. */
export interface TakenJob {
  job: JobRecord;
  location: JobLocation;
  removed: boolean;
  ended?: { id: string; reply: string };
}

/**
 * Finds one job through the job index (`{ns}:jobs`: job id -> its place,
 * kept by every script that moves a job; docs/architecture.md "Where a job
 * is"), then reads the entry there: a stream entry (waiting, or reserved
 * when the group's pending list holds it: XPENDING names the node) or a
 * member of the delayed set. A job that moved between the two reads is
 * looked up again.
 */
export class JobIndex {
  constructor(private readonly keys: Keys) {}

  async locate(redis: Redis, id: string): Promise<JobLocation | undefined> {
    for (let i = 0; i < LOCATE_TRIES; i++) {
      const found = await this.locateOnce(redis, id);
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
   * (why it left), in the same script; `ended` names the workflow if that
   * ended it (its client is told by the caller).
   */
  async take(redis: Redis, id: string, failure: (job: JobRecord) => StepFailure): Promise<TakenJob | undefined> {
    for (let i = 0; i < LOCATE_TRIES; i++) {
      const found = await this.locateOnce(redis, id);
      if (found === 'moved') continue;
      if (found === undefined) return undefined;
      if (found.location.state === 'reserved') return { job: found.job, location: found.location, removed: false };
      const { place, job } = found;
      const keys = [
        this.keys.stream(place.queue),
        this.keys.rd(place.queue),
        this.keys.delayed(place.queue),
        this.keys.jobs,
      ];
      const args: (string | number | Buffer)[] = [id, place.raw];
      // The entry the script removes is the one read here (its place names it): so is its workflow.
      const flow = job.workflow;
      if (flow !== undefined) {
        keys.push(this.keys.workflow(flow.id));
        for (const q of flow.queues) keys.push(this.keys.stream(q), this.keys.delayed(q));
        const [, blob] = outcomeBlob({ ok: false, failure: failure(job) });
        args.push(flow.node, blob);
      }
      const reply = (await callScript(redis, 'removeJob', keys, args)) as number | [number, Buffer, Buffer];
      const removed = Array.isArray(reply) ? reply[0] : Number(reply);
      if (removed === 1) {
        // Its unique lock went in the same script (removeJob-n.lua), while it held it.
        const taken: TakenJob = { job, location: found.location, removed: true };
        if (Array.isArray(reply) && flow !== undefined) taken.ended = { id: flow.id, reply: reply[2].toString() };
        return taken;
      }
      // -1: fetched meanwhile (0: moved): look again.
    }
    return undefined;
  }

  private async locateOnce(
    redis: Redis,
    id: string,
  ): Promise<{ location: JobLocation; place: Place; job: JobRecord } | undefined | 'moved'> {
    const raw = await redis.hget(this.keys.jobs, id);
    if (raw === null) return undefined;
    const place = parsePlace(raw);
    if (place === undefined) return undefined;
    if (place.kind === 'd') return this.readDelayed(redis, id, place);
    const stream = place.kind === 'r' ? this.keys.rd(place.queue) : this.keys.stream(place.queue);
    const pipe = redis.pipeline();
    pipe.xrangeBuffer(stream, place.ref, place.ref);
    pipe.call('XPENDING', stream, GROUP, place.ref, place.ref, 1);
    pipe.hget(this.keys.jobs, id);
    const [entry, pending, again] = (await pipe.exec()) ?? [];
    if (again?.[1] !== raw) return 'moved';
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

  private async readDelayed(
    redis: Redis,
    id: string,
    place: Place,
  ): Promise<{ location: JobLocation; place: Place; job: JobRecord } | 'moved'> {
    const members = (await redis.callBuffer(
      'ZRANGE',
      this.keys.delayed(place.queue),
      place.ref,
      place.ref,
      'BYSCORE',
    )) as Buffer[];
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
