import type { Redis } from 'ioredis';
import type { DeadSetChange, DeadWorkflowJob } from '../types.js';
import type { Keys } from './keys.js';
import { callScript } from './scripts.js';

/**
 * Most dead entries one script reads or moves: a dead set is walked a slice
 * per call, so Redis serves the nodes between two slices (one script over
 * 100,000 dead held it for seconds: past its busy threshold every client
 * got BUSY, and a script that has written cannot be killed).
 */
export const DEAD_SLICE = 1_000;

/**
 * Retries or deletes dead jobs of one queue (`BrokerAdmin.changeDead`):
 * every one, oldest first, up to the newest when it began (a job that dies
 * again meanwhile is not taken again); or those of `ids`, found in one walk
 * of the set (findDead-1.lua), then moved id by id in the order given, each
 * id's oldest first (changeDead-3.lua). Deleting all is one DEL.
 */
export async function changeDeadSet(
  redis: Redis,
  keys: Keys,
  queue: string,
  action: 'retry' | 'delete',
  ids: readonly string[] | undefined,
): Promise<DeadSetChange> {
  if (ids !== undefined && ids.length === 0) return { count: 0, moved: [], inWorkflow: [], inUse: [] };
  const dead = keys.dead(queue);
  if (action === 'delete' && ids === undefined) {
    // Refused before the DEL when another program wrote the key: a MULTI runs its DEL past a failed XLEN.
    await redis.xlen(dead);
    const replies = (await redis.multi().xlen(dead).del(dead).exec()) ?? [];
    const [err, n] = replies[0] ?? [null, 0];
    if (err) throw err;
    return { count: Number(n), moved: [], inWorkflow: [], inUse: [] };
  }
  const scriptKeys = [dead, keys.stream(queue), keys.jobs];
  // A retried job's stored failure and its unread announcement go (changeDead-3.lua).
  const prefixes: Prefixes = [keys.result(''), keys.reply('')];
  return ids === undefined
    ? changeAll(redis, scriptKeys, action, prefixes)
    : changeSome(redis, scriptKeys, action, prefixes, ids);
}

/** The prefixes of a result key and of a reply list. */
type Prefixes = [string, string];

async function changeAll(
  redis: Redis,
  scriptKeys: string[],
  action: 'retry' | 'delete',
  prefixes: Prefixes,
): Promise<DeadSetChange> {
  const newest = (await redis.xrevrange(scriptKeys[0] as string, '+', '-', 'COUNT', 1))[0];
  if (newest === undefined) return { count: 0, moved: [], inWorkflow: [], inUse: [] };
  let count = 0;
  const kept: Buffer[] = [];
  const inUse: string[] = [];
  let cursor = '-';
  while (cursor !== '') {
    const [n, next, left, busy] = (await callScript(redis, 'changeDead', scriptKeys, [
      action,
      'all',
      ...prefixes,
      cursor,
      newest[0],
      DEAD_SLICE,
    ])) as [number, Buffer, Buffer[], Buffer[]];
    count += Number(n);
    kept.push(...left);
    for (const id of busy) inUse.push(String(id));
    cursor = String(next);
  }
  return { count, moved: [], inWorkflow: newestFirst(kept), inUse: [...new Set(inUse)] };
}

async function changeSome(
  redis: Redis,
  scriptKeys: string[],
  action: 'retry' | 'delete',
  prefixes: Prefixes,
  ids: readonly string[],
): Promise<DeadSetChange> {
  // Each entry found, as the id it was asked by (of its job's and its own, the one given first).
  const found: { asked: string; entry: string }[] = [];
  const kept: Buffer[] = [];
  let cursor = '-';
  do {
    const [next, pairs, left] = (await callScript(
      redis,
      'findDead',
      [scriptKeys[0] as string],
      [action, cursor, DEAD_SLICE, ...ids],
    )) as [Buffer, Buffer[], Buffer[]];
    for (let i = 0; i + 1 < pairs.length; i += 2) found.push({ asked: String(pairs[i]), entry: String(pairs[i + 1]) });
    kept.push(...left);
    cursor = String(next);
  } while (cursor !== '');
  // Id by id in the order given (its first place), each id's oldest first: sort is stable.
  const rank = new Map<string, number>();
  ids.forEach((id, i) => {
    if (!rank.has(id)) rank.set(id, i);
  });
  found.sort((a, b) => (rank.get(a.asked) as number) - (rank.get(b.asked) as number));
  let count = 0;
  const done = new Set<string>();
  const inUse = new Set<string>();
  for (let i = 0; i < found.length; i += DEAD_SLICE) {
    const entries = found.slice(i, i + DEAD_SLICE).map((f) => f.entry);
    const [n, moved, busy] = (await callScript(redis, 'changeDead', scriptKeys, [
      action,
      'some',
      ...prefixes,
      ...entries,
    ])) as [number, Buffer[], Buffer[]];
    count += Number(n);
    for (const entry of moved) done.add(String(entry));
    for (const id of busy) inUse.add(String(id));
  }
  const moved = [...new Set(found.filter((f) => done.has(f.entry)).map((f) => f.asked))];
  return { count, moved, inWorkflow: newestFirst(kept), inUse: [...inUse] };
}

/** (id, workflow) pairs, oldest first, as DeadWorkflowJobs newest first (as listJobs lists the dead). */
function newestFirst(pairs: readonly Buffer[]): DeadWorkflowJob[] {
  const out: DeadWorkflowJob[] = [];
  for (let i = pairs.length - 2; i >= 0; i -= 2) out.push({ id: String(pairs[i]), workflow: String(pairs[i + 1]) });
  return out;
}
