import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { resultTtlOf } from '../../job-option-checks.js';
import {
  finishedOutcome,
  recordToRevoke,
  revokeRequest,
  stepToRevoke,
  revokedNow,
  stepOutcome,
  revokeRequestTtl,
  workflowMembers,
  workflowOutcome,
} from '../revoke-record.js';
import { revokedFailure } from '../member-failures.js';
import { memberOfJobId } from '../../workflow/member-id.js';
import type { RevokedJob, RevokeOptions, RevokeOutcome, WorkflowNodeRecord } from '../types.js';
import type { Control } from './control.js';
import { decodeResult, encodeResult } from './entry-codec.js';
import type { JobIndex, TakenJob } from './job-index.js';
import type { Keys } from './keys.js';
import type { Membership } from './membership.js';
import type { Results } from './results.js';
import { callScript, serverMs } from './scripts.js';
import type { Workflows } from './workflows.js';

/** Compare-and-set rounds before giving up on a result that keeps changing (a job finishing meanwhile settles it). */
const SWAP_ROUNDS = 5;

/**
 * Revokes on Redis: the REVOKED result written with a compare-and-set (a job
 * that finishes meanwhile keeps its own), the job taken out of its queue or
 * delayed set when no node holds it (found through the job index), the id added
 * to `{ns}:revoked` (bounded by age and count), and a control request to
 * every live node. A node that starts later loads the set when it registers.
 * A workflow's id revokes each of its members that has not ended.
 */
export class Revokes {
  constructor(
    private readonly keys: Keys,
    private readonly results: Results,
    private readonly membership: Membership,
    private readonly control: Control,
    private readonly jobIndex: JobIndex,
    private readonly workflows: Workflows,
    private readonly settings: { resultTtl: number; revokeTtl: number; revokeMax: number; leaseMs: number },
  ) {}

  async revoke(redis: Redis, ids: readonly string[], options: RevokeOptions): Promise<RevokeOutcome[]> {
    const outcomes: RevokeOutcome[] = [];
    const revoked: string[] = [];
    for (const id of new Set(ids)) {
      let outcome = await this.revokeOne(redis, id);
      if (outcome.outcome === 'unknown')
        outcome =
          (await this.revokeWorkflow(redis, id, options)) ?? (await this.revokeStep(redis, id, options)) ?? outcome;
      else if (outcome.outcome === 'revoked') revoked.push(id);
      outcomes.push(outcome);
    }
    await this.remember(redis, revoked, options);
    return outcomes;
  }

  /** Adds `ids` to the revoked set, then tells every live node of them; resolves with those revoked before. */
  private async remember(redis: Redis, ids: readonly string[], options: RevokeOptions): Promise<Set<string>> {
    const before = new Set<string>();
    if (ids.length === 0) return before;
    const [at, flags] = (await callScript(
      redis,
      'revokeJobs',
      [this.keys.revoked],
      [this.settings.revokeTtl, this.settings.revokeMax, ...ids],
    )) as [number, Buffer];
    const now = Number(at);
    const was = flags.toString();
    ids.forEach((id, i) => {
      if (was[i] === '1') before.add(id);
    });
    // After the set is written: a node registering meanwhile either loads it or is listed here.
    const nodes = await this.membership.listNodes(redis);
    if (nodes.length === 0) return before;
    const request = revokeRequest(randomUUID(), ids, options, now + this.settings.revokeTtl);
    await this.control.send(
      redis,
      nodes.map((n) => n.id),
      request,
      revokeRequestTtl(this.settings.leaseMs),
    );
    return before;
  }

  async list(redis: Redis): Promise<RevokedJob[]> {
    const replies = (await redis.pipeline().time().zrange(this.keys.revoked, 0, -1, 'WITHSCORES').exec()) ?? [];
    const [[timeErr, time], [rangeErr, range]] = replies as [
      [Error | null, [string, string]],
      [Error | null, string[]],
    ];
    if (timeErr) throw timeErr;
    if (rangeErr) throw rangeErr;
    const now = serverMs(time);
    const out: RevokedJob[] = [];
    for (let i = 0; i + 1 < range.length; i += 2) {
      const revokedAt = Number(range[i + 1]);
      const expiresAt = revokedAt + this.settings.revokeTtl;
      if (expiresAt > now) out.push({ id: range[i] as string, revokedAt, expiresAt });
    }
    return out;
  }

  /**
   * Revokes a workflow's members that may still run; undefined when `id` is no workflow's. The nodes hear of
   * every member first: taking them out one by one takes round trips per member, and meanwhile a
   * node would run a held member, or the callback its members' end enqueues, that it was not told of.
   */
  private async revokeWorkflow(redis: Redis, id: string, options: RevokeOptions): Promise<RevokeOutcome | undefined> {
    const record = await this.workflows.read(redis, id);
    if (record === undefined) return undefined;
    const pending = workflowMembers(record);
    // Told first, a node may store a member's REVOKED before revokeOne reads it: "before" is the set's word.
    const before = await this.remember(
      redis,
      pending.map((m) => m.jobId as string),
      options,
    );
    let members = 0;
    for (const member of pending) {
      const memberId = member.jobId as string;
      if (revokedNow(await this.revokeOne(redis, memberId, member), options, before.has(memberId))) members++;
    }
    return workflowOutcome(record, members);
  }

  /**
   * Revokes a workflow step not enqueued yet by its own id (its id names its workflow: member-id.ts), as a
   * revoke of its workflow revokes it; undefined when `id` is no member's of a workflow that has a record.
   * The nodes hear of it first: its workflow may enqueue it (the step before it ending) at any moment.
   */
  private async revokeStep(redis: Redis, id: string, options: RevokeOptions): Promise<RevokeOutcome | undefined> {
    const named = memberOfJobId(id);
    if (named === undefined) return undefined;
    const record = await this.workflows.read(redis, named.workflowId);
    const step = record === undefined ? undefined : stepToRevoke(record, id, named.index);
    if (step === undefined || 'outcome' in step) return step?.outcome;
    await this.remember(redis, [id], options);
    const outcome = await this.revokeOne(redis, id, step.member);
    return stepOutcome(outcome, named.workflowId);
  }

  /** `unstarted`: `id` is this workflow member's, which may be in no queue yet (revoked all the same). */
  private async revokeOne(redis: Redis, id: string, unstarted?: WorkflowNodeRecord): Promise<RevokeOutcome> {
    let found: TakenJob | undefined;
    let searched = false;
    for (let round = 0; round < SWAP_ROUNDS; round++) {
      const raw = await redis.getBuffer(this.keys.result(id));
      const stored = raw === null ? undefined : decodeResult(raw);
      const finished = finishedOutcome(id, stored);
      if (finished !== undefined) return finished;
      if (!searched) {
        found = await this.find(redis, id);
        searched = true;
      }
      const record = recordToRevoke(id, stored, found?.job, unstarted, Date.now());
      if (record === undefined) return { id, outcome: 'unknown' };
      const ttl =
        found === undefined ? this.settings.resultTtl : resultTtlOf(found.job.options, this.settings.resultTtl);
      // A job taken out of its queue is settled by no node: the waiting client hears of it now
      // (a node holding one announces it when it settles), in the script that stores the result.
      // So does the client of a workflow its removal ended (docs/architecture.md, "Workflows").
      const targets: { clientId: string; id: string }[] = [];
      const replyTo = found?.removed === true ? found.job.replyTo : undefined;
      if (replyTo !== undefined && found?.job.options.ignoreResult !== true) targets.push({ clientId: replyTo, id });
      if (found?.ended !== undefined && found.ended.reply !== '')
        targets.push({ clientId: found.ended.reply, id: found.ended.id });
      const announce = this.results.scriptAnnouncement(targets);
      const written = Number(
        await callScript(
          redis,
          'swapResult',
          [this.keys.result(id), ...announce.keys],
          [raw === null ? '0' : '1', raw ?? '', encodeResult(record), ttl, ...announce.args],
        ),
      );
      if (written !== 1) continue;
      // Taken out of its queue, a job with its own id ended with its REVOKED result kept: marked as a
      // node's settlement marks it (unique.ts addEndedMarks), so the same id enqueued again returns it
      // rather than adding a job no node would run (its id is revoked). (Enqueued between the removal
      // and this mark, such a job is added, and skipped as revoked as before.)
      if (found?.removed === true && found.job.ownId === true && found.job.options.ignoreResult !== true)
        await redis.set(this.keys.endedMark(id), '1', 'PX', ttl);
      const outcome: RevokeOutcome = { id, outcome: 'revoked' };
      if (stored !== undefined) outcome.state = stored.state;
      if (found?.removed === true) outcome.removed = true;
      if (found?.job.workflow !== undefined) outcome.workflow = found.job.workflow.id;
      return outcome;
    }
    // Changing every time: it is being settled right now; the node that holds it hears of the revoke.
    return { id, outcome: 'revoked' };
  }

  /** The job wherever it is (the job index), taken out of its queue or delayed set when nobody holds it. */
  private async find(redis: Redis, id: string): Promise<TakenJob | undefined> {
    return this.jobIndex.take(redis, id, revokedFailure);
  }
}
