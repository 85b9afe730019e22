import type { Redis } from 'ioredis';
import { resultTtlOf } from '../../job-option-checks.js';
import { revokedFailure } from '../member-failures.js';
import { finishedOutcome, recordToRevoke } from '../revoke-record.js';
import type { ResultRecord, RevokeOutcome, WorkflowNodeRecord } from '../types.js';
import { decodeResult, encodeResult } from './entry-codec.js';
import type { JobIndex, TakenJob } from './job-index.js';
import type { Keys } from './keys.js';
import { callScript } from './scripts.js';

/** Compare-and-set rounds before giving up on a result that keeps changing (a job finishing meanwhile settles it). */
const SWAP_ROUNDS = 5;

/**
 * Ids revoked in the same round trips: a workflow's revoke takes thousands,
 * and one id at a time cost several round trips each (seconds for 10,000).
 * Bounds what a revoke holds at once (the results it read) and each reply.
 */
export const REVOKE_CHUNK = 500;

/** A job to revoke; `unstarted`: the workflow member it is, which may be in no queue yet (revoked all the same). */
export interface RevokeTarget {
  id: string;
  unstarted?: WorkflowNodeRecord;
}

/** What a revoke of jobs found: an outcome per target (undefined: refused), and the first refusal. */
export interface RevokeResults {
  outcomes: (RevokeOutcome | undefined)[];
  refusal?: Error;
}

/** One target's state within a chunk: the result read this round, and the job found (searched once). */
interface Progress {
  target: RevokeTarget;
  raw: Buffer | null;
  stored: ResultRecord | undefined;
  found: TakenJob | undefined;
  searched: boolean;
  /** Its removal was refused: thrown once the others are written. */
  refused: boolean;
  outcome: RevokeOutcome | undefined;
}

/**
 * Revokes jobs by id on Redis, many at once: each one's REVOKED result
 * written with a compare-and-set (a job that finishes meanwhile keeps its
 * own). A job no node holds is taken out of its queue or delayed set (the
 * job index) by the script that stores its result (removeJob-n.lua): taken
 * out in one call and given its result in a later one, it would be lost
 * (in no queue, no result, its client waiting for ever) when that call
 * never came. The others' results are stored by swapResult-n.lua. Per chunk
 * of ids: one read of their results, one look-up, one pipeline that takes
 * out those waiting with their results, one pipeline of the other writes;
 * an id whose result changed meanwhile goes round again. Telling the nodes
 * (the revoked set, the control request) is the caller's.
 */
export class JobRevokes {
  constructor(
    private readonly keys: Keys,
    private readonly jobIndex: JobIndex,
    private readonly resultTtl: number,
  ) {}

  /**
   * One outcome per target, in order (`unknown` for an id nothing is known
   * of). A refusal from Redis for one id (its read, its removal, its write,
   * an undecodable result) leaves that id's outcome undefined and is the
   * `refusal`, for the caller to throw once it has told the nodes of those
   * revoked: a held one must be heard of. An error that stops a chunk part
   * way (a look Redis refused, a lost connection) is the refusal too, with
   * the outcomes written before it; a job is never out of its queue without
   * its result. The ids after a refused chunk are not looked at.
   */
  async revoke(redis: Redis, targets: readonly RevokeTarget[]): Promise<RevokeResults> {
    const outcomes: (RevokeOutcome | undefined)[] = [];
    for (let i = 0; i < targets.length; i += REVOKE_CHUNK) {
      const refusals: Error[] = [];
      outcomes.push(...(await this.revokeChunk(redis, targets.slice(i, i + REVOKE_CHUNK), refusals)));
      if (refusals.length > 0) return { outcomes, refusal: refusals[0] };
    }
    return { outcomes };
  }

  private async revokeChunk(
    redis: Redis,
    targets: readonly RevokeTarget[],
    refusals: Error[],
  ): Promise<(RevokeOutcome | undefined)[]> {
    const all: Progress[] = targets.map((target) => ({
      target,
      raw: null,
      stored: undefined,
      found: undefined,
      searched: false,
      refused: false,
      outcome: undefined,
    }));
    let left = all;
    try {
      for (let round = 0; round < SWAP_ROUNDS && left.length > 0; round++) {
        const open = await this.readResults(redis, left, refusals);
        const changed = await this.take(redis, open, refusals);
        left = [...changed, ...(await this.write(redis, open, refusals))];
      }
    } catch (err) {
      // Thrown part way (a look Redis refused, a lost connection): those written already are
      // revoked, and the caller must still tell the nodes of them (a node would run one it holds).
      refusals.push(err instanceof Error ? err : new Error(String(err)));
      return all.map((p) => p.outcome);
    }
    // Changing every time: it is being settled right now; the node that holds it hears of the revoke.
    for (const p of left) p.outcome = { id: p.target.id, outcome: 'revoked' };
    return all.map((p) => p.outcome);
  }

  /**
   * Reads the targets' results (one pipeline of GETs, not an MGET: a key of another type must be that
   * id's refusal, before its job is taken out): those final already get their outcome; the others are returned.
   */
  private async readResults(redis: Redis, left: readonly Progress[], refusals: Error[]): Promise<Progress[]> {
    const pipe = redis.pipeline();
    for (const p of left) pipe.getBuffer(this.keys.result(p.target.id));
    const replies = (await pipe.exec()) ?? [];
    const open: Progress[] = [];
    left.forEach((p, x) => {
      const [err, raw] = replies[x] ?? [new Error('no reply to GET')];
      try {
        if (err) throw err;
        p.raw = (raw as Buffer | null) ?? null;
        p.stored = p.raw === null ? undefined : decodeResult(p.raw, this.keys.result(''), p.target.id);
      } catch (refused) {
        refusals.push(refused instanceof Error ? refused : new Error(String(refused)));
        return;
      }
      p.outcome = finishedOutcome(p.target.id, p.stored);
      if (p.outcome === undefined) open.push(p);
    });
    return open;
  }

  /**
   * Finds each job not searched for yet, and takes out of its queue, with its REVOKED result stored in the
   * same step, one nobody holds; returns those whose result changed since it was read (nothing done).
   */
  private async take(redis: Redis, open: readonly Progress[], refusals: Error[]): Promise<Progress[]> {
    const unsearched = open.filter((p) => !p.searched);
    if (unsearched.length === 0) return [];
    const taken = await this.jobIndex.takeMany(
      redis,
      unsearched.map((p) => p.target.id),
      revokedFailure,
      (at, job) => {
        const p = unsearched[at] as Progress;
        const { id, unstarted } = p.target;
        const record = recordToRevoke(id, p.stored, job, unstarted, Date.now()) as ResultRecord;
        // Taken out of its queue, no node settles it: its client hears of it now (a node holding one
        // announces it when it settles). A job with its own id is marked as a node's settlement marks
        // it (unique.ts addEndedMarks), so the same id enqueued again returns it rather than adding a
        // job no node would run (its id is revoked).
        const keep = job.options.ignoreResult !== true;
        return {
          read: p.raw,
          record: encodeResult(record),
          ttl: resultTtlOf(job.options, this.resultTtl),
          replyTo: keep ? (job.replyTo ?? '') : '',
          markEnded: keep && job.ownId === true,
        };
      },
    );
    const changed: Progress[] = [];
    unsearched.forEach((p, x) => {
      const found = taken[x];
      if (found === 'changed') {
        changed.push(p);
        return;
      }
      p.searched = true;
      if (found instanceof Error) {
        refusals.push(found);
        p.refused = true;
        return;
      }
      p.found = found;
      if (found?.removed === true) p.outcome = revokedOutcome(p, found);
    });
    return changed;
  }

  /**
   * Writes the REVOKED results of those not taken out of a queue (held by a node, or in none: one pipeline
   * of compare-and-sets); returns those whose result changed meanwhile.
   */
  private async write(redis: Redis, open: readonly Progress[], refusals: Error[]): Promise<Progress[]> {
    const pipe = redis.pipeline();
    const sent: Progress[] = [];
    for (const p of open) {
      if (p.refused || !p.searched || p.outcome !== undefined) continue;
      const { id, unstarted } = p.target;
      const found = p.found;
      const record = recordToRevoke(id, p.stored, found?.job, unstarted, Date.now());
      if (record === undefined) {
        p.outcome = { id, outcome: 'unknown' };
        continue;
      }
      const ttl = found === undefined ? this.resultTtl : resultTtlOf(found.job.options, this.resultTtl);
      callScript(
        pipe,
        'swapResult',
        [this.keys.result(id)],
        [p.raw === null ? '0' : '1', p.raw ?? '', encodeResult(record), ttl],
      );
      sent.push(p);
    }
    if (sent.length === 0) return [];
    const replies = (await pipe.exec()) ?? [];
    const again: Progress[] = [];
    sent.forEach((p, x) => {
      const [err, written] = replies[x] ?? [new Error('no reply to swapResult')];
      if (err) refusals.push(err);
      else if (Number(written) !== 1) again.push(p);
      else p.outcome = revokedOutcome(p, p.found);
    });
    return again;
  }
}

/** A revoked target's outcome, from its result read and the job found. */
function revokedOutcome(p: Progress, found: TakenJob | undefined): RevokeOutcome {
  const outcome: RevokeOutcome = { id: p.target.id, outcome: 'revoked' };
  if (p.stored !== undefined) outcome.state = p.stored.state;
  if (found?.removed === true) outcome.removed = true;
  if (found?.job.workflow !== undefined) outcome.workflow = found.job.workflow.id;
  return outcome;
}
