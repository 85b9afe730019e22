import type { Redis } from 'ioredis';
import { OptionError } from '../../errors.js';
import type { DeadJob, JobPage, ListedJob, ListedState } from '../types.js';
import { decodeJob, entryTime, fieldMap } from './entry-codec.js';
import type { Keys } from './keys.js';
import { callScript } from './scripts.js';

const ENTRY_ID = /^\d+-\d+$/;

/** A cursor this broker did not make for `state`. */
function badCursor(cursor: string, state: ListedState): OptionError {
  return new OptionError('cursor', cursor, `a cursor printed by a previous page of ${state} jobs`);
}

/** A dead-set entry as `prefork dead list` and `prefork jobs --state dead` show it. */
export function deadJob(queue: string, rawId: Buffer, fields: Buffer[]): DeadJob {
  const id = rawId.toString();
  const { job } = decodeJob(id, queue, fields);
  const map = fieldMap(fields);
  const reason = map.get('reason')?.toString() ?? '';
  const diedAt = Number(map.get('diedAt')?.toString()) || entryTime(id);
  return { job, reason, diedAt };
}

/**
 * Pages through a queue's jobs in O(limit) per page (`prefork jobs`).
 * Cursors: waiting `r:<entry id>` / `q:<entry id>` (the stream and the last
 * entry read), delayed `d:<due ms>:<skip>` (jobs with that due time already
 * shown), dead `x:<entry id>`.
 */
export async function listJobs(
  redis: Redis,
  keys: Keys,
  queue: string,
  state: ListedState,
  limit: number,
  cursor: string | undefined,
): Promise<JobPage> {
  if (state === 'waiting') return waitingPage(redis, keys, queue, limit, cursor);
  if (state === 'delayed') return delayedPage(redis, keys, queue, limit, cursor);
  return deadPage(redis, keys, queue, limit, cursor);
}

async function waitingPage(
  redis: Redis,
  keys: Keys,
  queue: string,
  limit: number,
  cursor: string | undefined,
): Promise<JobPage> {
  let phase = 'r';
  let after = '';
  if (cursor !== undefined) {
    const m = /^([rq]):(\d+-\d+)$/.exec(cursor);
    if (m === null) throw badCursor(cursor, 'waiting');
    [, phase = 'r', after = ''] = m;
  }
  const [nextKind, nextId, flat] = (await callScript(
    redis,
    'listWaiting',
    [keys.rd(queue), keys.stream(queue)],
    [phase, after, limit],
  )) as [Buffer, Buffer, (Buffer | Buffer[])[]];
  const jobs: ListedJob[] = [];
  for (let i = 0; i + 2 < flat.length; i += 3) {
    const entryId = (flat[i + 1] as Buffer).toString();
    jobs.push({ job: decodeJob(entryId, queue, flat[i + 2] as Buffer[]).job });
  }
  const kind = nextKind.toString();
  return { jobs, next: kind === '' ? undefined : `${kind}:${nextId.toString()}` };
}

async function delayedPage(
  redis: Redis,
  keys: Keys,
  queue: string,
  limit: number,
  cursor: string | undefined,
): Promise<JobPage> {
  let min = Number.MIN_SAFE_INTEGER;
  let skip = 0;
  if (cursor !== undefined) {
    const m = /^d:(-?\d{1,16}):(\d{1,9})$/.exec(cursor);
    if (m === null) throw badCursor(cursor, 'delayed');
    min = Number(m[1]);
    skip = Number(m[2]);
  }
  const flat = (await callScript(redis, 'listDelayed', [keys.delayed(queue)], [min, skip, limit])) as (
    Buffer | Buffer[]
  )[];
  const jobs: ListedJob[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const dueAt = Number((flat[i] as Buffer).toString());
    jobs.push({ job: decodeJob(`${dueAt}-0`, queue, flat[i + 1] as Buffer[]).job, dueAt });
  }
  if (jobs.length < limit) return { jobs, next: undefined };
  // The next page starts at the last due time, past the jobs with that time shown so far.
  const last = (jobs[jobs.length - 1] as ListedJob).dueAt as number;
  let sameAsLast = 0;
  for (let i = jobs.length - 1; i >= 0 && jobs[i]?.dueAt === last; i--) sameAsLast++;
  const nextSkip = last === min ? skip + sameAsLast : sameAsLast;
  return { jobs, next: `d:${last}:${nextSkip}` };
}

async function deadPage(
  redis: Redis,
  keys: Keys,
  queue: string,
  limit: number,
  cursor: string | undefined,
): Promise<JobPage> {
  let end = '+';
  if (cursor !== undefined) {
    const id = cursor.startsWith('x:') ? cursor.slice(2) : '';
    if (!ENTRY_ID.test(id)) throw badCursor(cursor, 'dead');
    end = `(${id}`;
  }
  const entries = (await redis.callBuffer('XREVRANGE', keys.dead(queue), end, '-', 'COUNT', limit)) as [
    Buffer,
    Buffer[],
  ][];
  const jobs: ListedJob[] = entries.map(([rawId, fields]) => {
    const d = deadJob(queue, rawId, fields);
    return { job: d.job, reason: d.reason, diedAt: d.diedAt };
  });
  const last = entries[entries.length - 1];
  return { jobs, next: entries.length < limit || last === undefined ? undefined : `x:${last[0].toString()}` };
}
