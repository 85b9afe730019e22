import type { Redis } from 'ioredis';
import type { DeadJob, DeadSetChange, JobPage, ListedState, QueueCounts } from '../types.js';
import { InvalidStateError } from '../../errors.js';
import { workflowOfMeta } from './entry-codec.js';
import { deadJob, listJobs } from './job-pages.js';
import type { Keys } from './keys.js';
import { callScript } from './scripts.js';
import { changeDeadSet } from './dead-set.js';

/**
 * Most entries one purge script reads (see purgeQueue-n.lua): a queue is
 * purged a slice per call, so Redis serves the nodes between two slices.
 */
export const PURGE_SLICE = 1_000;

/** Undelivered entries scanned for timer markers when counting (see countJobs-4.lua). */
const MARKER_SCAN = 1000;

/**
 * Inspection and maintenance of queues. Counts: acked entries are deleted,
 * so a stream holds exactly the reserved entries (the group's pending list)
 * and the waiting ones: waiting = XLEN − pending − timer markers, over the
 * stream and its :rd.
 */
export class QueueAdmin {
  constructor(private readonly keys: Keys) {}

  async knownQueues(redis: Redis): Promise<string[]> {
    return (await redis.smembers(this.keys.queues)).sort();
  }

  async counts(redis: Redis, queues: readonly string[]): Promise<QueueCounts[]> {
    const pipe = redis.pipeline();
    for (const q of queues) callScript(pipe, 'countJobs', this.keys.queueKeys(q), [MARKER_SCAN]);
    const replies = (await pipe.exec()) ?? [];
    return queues.map((queue, i) => {
      const [err, value] = replies[i] ?? [null, null];
      if (err) throw err;
      const [waiting, reserved, delayed, dead] = value as [number, number, number, number];
      return { queue, waiting, reserved, delayed, dead };
    });
  }

  /**
   * Drops the queue's waiting and delayed jobs; returns how many, and the
   * workflows that ended because members of theirs were dropped (their
   * clients are told by the caller).
   */
  async purge(redis: Redis, queue: string): Promise<{ dropped: number; ended: { id: string; reply: string }[] }> {
    const sliced = await this.purgeSlices(redis, queue);
    // The workflows of the members met so far (id -> its queues): the script needs their keys.
    const flows = new Map<string, readonly string[]>();
    for (;;) {
      const keys = [this.keys.stream(queue), this.keys.rd(queue), this.keys.delayed(queue), this.keys.jobs];
      const args: (string | number)[] = ['all', flows.size];
      for (const [id, qs] of flows) {
        keys.push(this.keys.workflow(id), ...qs.flatMap((q) => [this.keys.stream(q), this.keys.delayed(q)]));
        args.push(id, qs.length);
      }
      const [dropped, ...rest] = (await callScript(redis, 'purgeQueue', keys, args)) as [number, ...Buffer[]];
      if (dropped !== -2) {
        const ended: { id: string; reply: string }[] = [];
        for (let i = 0; i + 2 < rest.length; i += 3) ended.push({ id: String(rest[i]), reply: String(rest[i + 2]) });
        return { dropped: sliced + Number(dropped), ended };
      }
      for (const meta of rest) {
        const ref = workflowOfMeta(meta.toString());
        // Asked for again once given: the script and this code disagree on what a workflow's meta is.
        if (ref === undefined || flows.has(ref.id))
          throw new InvalidStateError(`purge: cannot read the workflow of a member's meta ${meta.toString()}`);
        flows.set(ref.id, ref.queues);
      }
    }
  }

  /**
   * Drops the queue's waiting jobs of no workflow, PURGE_SLICE entries per
   * script (purgeQueue-n.lua 'slice'), as the queue was when it began:
   * each stream up to its last entry then, and as many delayed members as
   * it held then. Returns how many jobs it dropped; purge() drops the rest.
   */
  private async purgeSlices(redis: Redis, queue: string): Promise<number> {
    const keys = [this.keys.stream(queue), this.keys.rd(queue), this.keys.delayed(queue), this.keys.jobs];
    const replies = await redis
      .pipeline()
      .xrevrange(this.keys.stream(queue), '+', '-', 'COUNT', 1)
      .xrevrange(this.keys.rd(queue), '+', '-', 'COUNT', 1)
      .zcard(this.keys.delayed(queue))
      .exec();
    const [streamLast, rdLast, delayed] = (replies ?? []).map(([err, value]) => {
      if (err) throw err;
      return value;
    }) as [[string, string[]][], [string, string[]][], number];
    const lastIds = [streamLast[0]?.[0] ?? '', rdLast[0]?.[0] ?? ''];
    let cursors: string[] = lastIds.map((id) => (id === '' ? '' : '-'));
    let kept = 0;
    let left = delayed;
    let dropped = 0;
    while (cursors[0] !== '' || cursors[1] !== '' || left > 0) {
      const [n, q, rd, k, l] = (await callScript(redis, 'purgeQueue', keys, [
        'slice',
        PURGE_SLICE,
        ...(cursors as [string, string]),
        ...(lastIds as [string, string]),
        kept,
        left,
      ])) as [number, Buffer, Buffer, number, number];
      dropped += Number(n);
      cursors = [String(q), String(rd)];
      kept = Number(k);
      left = Number(l);
    }
    return dropped;
  }

  async listDead(redis: Redis, queue: string, limit: number): Promise<DeadJob[]> {
    if (limit <= 0) return [];
    const entries = (await redis.callBuffer('XREVRANGE', this.keys.dead(queue), '+', '-', 'COUNT', limit)) as [
      Buffer,
      Buffer[],
    ][];
    return entries.map(([rawId, fields]) => deadJob(queue, rawId, fields));
  }

  changeDead(
    redis: Redis,
    queue: string,
    action: 'retry' | 'delete',
    ids: readonly string[] | undefined,
  ): Promise<DeadSetChange> {
    return changeDeadSet(redis, this.keys, queue, action, ids);
  }

  listJobs(redis: Redis, queue: string, state: ListedState, limit: number, cursor?: string): Promise<JobPage> {
    return listJobs(redis, this.keys, queue, state, limit, cursor);
  }
}
