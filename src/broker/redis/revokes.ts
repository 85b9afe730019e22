import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  revokeRequest,
  stepToRevoke,
  revokedNow,
  stepOutcome,
  revokeRequestTtl,
  workflowMembers,
  workflowOutcome,
} from '../revoke-record.js';
import { memberOfJobId } from '../../workflow/member-id.js';
import type { RevokedJob, RevokeOptions, RevokeOutcome } from '../types.js';
import type { Control } from './control.js';
import type { JobIndex } from './job-index.js';
import { JobRevokes } from './job-revokes.js';
import type { Keys } from './keys.js';
import type { Membership } from './membership.js';
import { callScript, serverMs } from './scripts.js';
import type { Workflows } from './workflows.js';

/**
 * Revokes on Redis: the REVOKED result written with a compare-and-set (a job
 * that finishes meanwhile keeps its own), the job taken out of its queue or
 * delayed set when no node holds it (found through the job index), the id added
 * to `{ns}:revoked` (bounded by age and count), and a control request to
 * every live node. A node that starts later loads the set when it registers.
 * A workflow's id revokes each of its members that has not ended. The jobs
 * themselves are revoked many at a time (JobRevokes).
 */
export class Revokes {
  private readonly jobs: JobRevokes;

  constructor(
    private readonly keys: Keys,
    private readonly membership: Membership,
    private readonly control: Control,
    jobIndex: JobIndex,
    private readonly workflows: Workflows,
    private readonly settings: { resultTtl: number; revokeTtl: number; revokeMax: number; leaseMs: number },
  ) {
    this.jobs = new JobRevokes(keys, jobIndex, settings.resultTtl);
  }

  async revoke(redis: Redis, ids: readonly string[], options: RevokeOptions): Promise<RevokeOutcome[]> {
    // The ids of jobs all at once (JobRevokes batches them); the others may name a workflow or its step.
    const unique = [...new Set(ids)];
    const { outcomes, refusal } = await this.jobs.revoke(
      redis,
      unique.map((id) => ({ id })),
    );
    const revoked = unique.filter((_, i) => outcomes[i]?.outcome === 'revoked');
    // Refused for one of them: those revoked are told of all the same (a node would run one it holds).
    if (refusal !== undefined) {
      await this.remember(redis, revoked, options);
      throw refusal;
    }
    // An id no job has may name a workflow, or a step of one not enqueued yet: those with a record are
    // found for all of them at once, and only they are read one at a time.
    const unknown = unique.filter((_, i) => outcomes[i]?.outcome === 'unknown');
    const flows = await this.workflows.withRecords(redis, new Set(unknown.flatMap(workflowsNamedBy)));
    for (const [i, id] of unique.entries()) {
      const outcome = outcomes[i] as RevokeOutcome;
      if (outcome.outcome !== 'unknown') continue;
      const flow = flows.has(id) ? await this.revokeWorkflow(redis, id, options) : undefined;
      const step = memberOfJobId(id);
      outcomes[i] =
        flow ??
        (step !== undefined && flows.has(step.workflowId) ? await this.revokeStep(redis, id, options) : undefined) ??
        outcome;
    }
    await this.remember(redis, revoked, options);
    return outcomes as RevokeOutcome[];
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

  async list(redis: Redis, since?: number): Promise<RevokedJob[]> {
    const pipe = redis.pipeline().time();
    if (since === undefined) pipe.zrange(this.keys.revoked, 0, -1, 'WITHSCORES');
    else pipe.zrange(this.keys.revoked, Math.max(0, Math.floor(since)), '+inf', 'BYSCORE', 'WITHSCORES');
    const replies = (await pipe.exec()) ?? [];
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
   * every member first: taking them out takes round trips (per chunk of members), and meanwhile a
   * node would run a held member, or the callback its members' end enqueues, that it was not told of.
   */
  private async revokeWorkflow(redis: Redis, id: string, options: RevokeOptions): Promise<RevokeOutcome | undefined> {
    const record = await this.workflows.read(redis, id);
    if (record === undefined) return undefined;
    const pending = workflowMembers(record);
    // Told first, a node may store a member's REVOKED before its result is read: "before" is the set's word.
    const before = await this.remember(
      redis,
      pending.map((m) => m.jobId as string),
      options,
    );
    const { outcomes, refusal } = await this.jobs.revoke(
      redis,
      pending.map((member) => ({ id: member.jobId as string, unstarted: member })),
    );
    if (refusal !== undefined) throw refusal;
    const members = outcomes.filter(
      (outcome) => outcome !== undefined && revokedNow(outcome, options, before.has(outcome.id)),
    ).length;
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
    const { outcomes, refusal } = await this.jobs.revoke(redis, [{ id, unstarted: step.member }]);
    if (refusal !== undefined) throw refusal;
    return stepOutcome(outcomes[0] as RevokeOutcome, named.workflowId);
  }
}

/** The workflows an id may name: its own (a workflow's id), and the one whose step it is, if shaped as a step's. */
function workflowsNamedBy(id: string): string[] {
  const step = memberOfJobId(id);
  return step === undefined ? [id] : [id, step.workflowId];
}
