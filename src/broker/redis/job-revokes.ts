import type { Redis } from 'ioredis';
import { resultTtlOf } from '../../job-option-checks.js';
import { revokedFailure } from '../member-failures.js';
import { finishedOutcome, recordToRevoke } from '../revoke-record.js';
import type { ResultRecord, RevokeOutcome, WorkflowNodeRecord } from '../types.js';
import { decodeResult, encodeResult } from './entry-codec.js';
import type { JobIndex, TakenJob } from './job-index.js';
import type { Keys } from './keys.js';
import type { Results } from './results.js';
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
 * written with a compare-and-set (swapResult-n.lua: a job that finishes
 * meanwhile keeps its own), the job taken out of its queue or delayed set
 * when no node holds it (the job index). Per chunk of ids: one read of their
 * results, one look-up and one removal pass (JobIndex.takeMany), one pipeline
 * of writes; an id whose result changed meanwhile goes round again.
 * Telling the nodes (the revoked set, the control request) is the caller's.
 */
export class JobRevokes {
  constructor(
    private readonly keys: Keys,
    private readonly results: Results,
    private readonly jobIndex: JobIndex,
    private readonly resultTtl: number,
  ) {}

  /**
   * One outcome per target, in order (`unknown` for an id nothing is known
   * of). A refusal from Redis for one id (its read, its removal, its write,
   * an undecodable result) leaves that id's outcome undefined and is the
   * `refusal`, for the caller to throw once it has told the nodes of those
   * revoked: a job taken out of its queue with it must still get its
   * REVOKED result, and a held one must be heard of. An error that stops a
   * chunk part way (a look Redis refused, a lost connection) is the refusal
   * too, with the outcomes written before it. The ids after a refused chunk
   * are not looked at.
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
        await this.find(redis, open, refusals);
        left = await this.write(redis, open, refusals);
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
        p.stored = p.raw === null ? undefined : decodeResult(p.raw);
      } catch (refused) {
        refusals.push(refused instanceof Error ? refused : new Error(String(refused)));
        return;
      }
      p.outcome = finishedOutcome(p.target.id, p.stored);
      if (p.outcome === undefined) open.push(p);
    });
    return open;
  }

  /** Finds (and takes out of its queue when nobody holds it) each job not searched for yet. */
  private async find(redis: Redis, open: readonly Progress[], refusals: Error[]): Promise<void> {
    const unsearched = open.filter((p) => !p.searched);
    if (unsearched.length === 0) return;
    const taken = await this.jobIndex.takeMany(
      redis,
      unsearched.map((p) => p.target.id),
      revokedFailure,
    );
    unsearched.forEach((p, x) => {
      const found = taken[x];
      p.searched = true;
      if (found instanceof Error) {
        refusals.push(found);
        p.refused = true;
      } else p.found = found;
    });
  }

  /** Writes the REVOKED results (one pipeline of compare-and-sets); returns those whose result changed meanwhile. */
  private async write(redis: Redis, open: readonly Progress[], refusals: Error[]): Promise<Progress[]> {
    const pipe = redis.pipeline();
    const sent: { p: Progress; ttl: number }[] = [];
    for (const p of open) {
      if (p.refused) continue;
      const { id, unstarted } = p.target;
      const found = p.found;
      const record = recordToRevoke(id, p.stored, found?.job, unstarted, Date.now());
      if (record === undefined) {
        p.outcome = { id, outcome: 'unknown' };
        continue;
      }
      const ttl = found === undefined ? this.resultTtl : resultTtlOf(found.job.options, this.resultTtl);
      // A job taken out of its queue is settled by no node: the waiting client hears of it now
      // (a node holding one announces it when it settles), in the script that stores the result.
      // So does the client of a workflow its removal ended (docs/architecture.md, "Workflows").
      const targets: { clientId: string; id: string }[] = [];
      const replyTo = found?.removed === true ? found.job.replyTo : undefined;
      if (replyTo !== undefined && found?.job.options.ignoreResult !== true) targets.push({ clientId: replyTo, id });
      if (found?.ended !== undefined && found.ended.reply !== '')
        targets.push({ clientId: found.ended.reply, id: found.ended.id });
      const announce = this.results.scriptAnnouncement(targets);
      callScript(
        pipe,
        'swapResult',
        [this.keys.result(id), ...announce.keys],
        [p.raw === null ? '0' : '1', p.raw ?? '', encodeResult(record), ttl, ...announce.args],
      );
      sent.push({ p, ttl });
    }
    if (sent.length === 0) return [];
    const replies = (await pipe.exec()) ?? [];
    const again: Progress[] = [];
    const marks = redis.pipeline();
    let marked = 0;
    sent.forEach(({ p, ttl }, x) => {
      const [err, written] = replies[x] ?? [new Error('no reply to swapResult')];
      if (err) {
        refusals.push(err);
        return;
      }
      if (Number(written) !== 1) {
        again.push(p);
        return;
      }
      const { id } = p.target;
      const found = p.found;
      // Taken out of its queue, a job with its own id ended with its REVOKED result kept: marked as a
      // node's settlement marks it (unique.ts addEndedMarks), so the same id enqueued again returns it
      // rather than adding a job no node would run (its id is revoked). (Enqueued between the removal
      // and this mark, such a job is added, and skipped as revoked as before.)
      if (found?.removed === true && found.job.ownId === true && found.job.options.ignoreResult !== true) {
        marks.set(this.keys.endedMark(id), '1', 'PX', ttl);
        marked++;
      }
      const outcome: RevokeOutcome = { id, outcome: 'revoked' };
      if (p.stored !== undefined) outcome.state = p.stored.state;
      if (found?.removed === true) outcome.removed = true;
      if (found?.job.workflow !== undefined) outcome.workflow = found.job.workflow.id;
      p.outcome = outcome;
    });
    if (marked > 0) for (const [err] of (await marks.exec()) ?? []) if (err) refusals.push(err);
    return again;
  }
}
