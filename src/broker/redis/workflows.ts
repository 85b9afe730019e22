import type { ChainableCommander, Redis } from 'ioredis';
import { decodeBody, encodeBody } from '../../protocol/codec.js';
import { workflowResult } from '../../workflow/record.js';
import type {
  CompiledWorkflow,
  StepFailure,
  StepOutcome,
  WorkflowNode,
  WorkflowNodeKind,
  WorkflowNodeRecord,
  WorkflowRecord,
  WorkflowState,
} from '../types.js';
import type { ResultRecord, Settlement } from '../types.js';
import { encodeJob, workflowOfMeta } from './entry-codec.js';
import type { Keys } from './keys.js';
import { packStrings } from './pack.js';
import type { Results } from './results.js';
import { callScript } from './scripts.js';
import type { ValueLimit } from './value-limit.js';

const KIND_CODE: Record<WorkflowNodeKind, string> = { task: 'L', chain: 'C', group: 'G', chord: 'D' };
const KIND_OF = new Map<string, WorkflowNodeKind>([
  ['L', 'task'],
  ['C', 'chain'],
  ['G', 'group'],
  ['D', 'chord'],
]);

/** A node as lib/workflow.lua reads it: "<kind> parent pos first count queue immutable delay eta onSuccess onError". */
function describe(node: WorkflowNode): string {
  const job = node.job;
  const delay = job?.eta === undefined && job?.delay !== undefined && job.delay > 0 ? Math.round(job.delay) : -1;
  const eta = job?.eta === undefined ? -1 : Math.max(0, Math.round(job.eta));
  return [
    KIND_CODE[node.kind],
    node.parent,
    node.pos,
    node.first,
    node.count,
    node.queue,
    node.immutable ? 1 : 0,
    delay,
    eta,
    node.onSuccess,
    node.onError,
  ].join(' ');
}

/** A workflow job's outcome as the fetch script records it: 's' or 'f', and its msgpack. */
export function outcomeBlob(outcome: StepOutcome): ['s' | 'f', Buffer] {
  return outcome.ok ? ['s', encodeBody(outcome.value)] : ['f', encodeBody(outcome.failure)];
}

/** The workflow members a batch of settlements ends, per workflow (for the fetch script's workflow groups). */
export interface WorkflowGroup {
  id: string;
  queues: readonly string[];
  /** node, 's' | 'f', blob; flat. */
  members: (number | string | Buffer)[];
}

/**
 * Groups the final settlements of workflow jobs by workflow; undefined when
 * there are none (the common case). An outcome Redis would refuse (over
 * `limit`) becomes the member's failure, saying why: the fetch script that
 * records it also acks the job.
 */
export function workflowGroups(
  settlements: readonly { kind: string }[],
  limit: ValueLimit,
): Map<string, WorkflowGroup> | undefined {
  let groups: Map<string, WorkflowGroup> | undefined;
  for (const s of settlements as readonly Settlement[]) {
    if ((s.kind !== 'ack' && s.kind !== 'dead') || s.outcome === undefined) continue;
    const ref = s.delivery.job.workflow;
    if (ref === undefined) continue;
    groups ??= new Map();
    let group = groups.get(ref.id);
    if (group === undefined) {
      group = { id: ref.id, queues: ref.queues, members: [] };
      groups.set(ref.id, group);
    }
    let blob = outcomeBlob(s.outcome);
    const error = limit.oversize(s.delivery.job.task, blob[1].length);
    if (error !== undefined)
      blob = outcomeBlob({ ok: false, failure: { id: s.delivery.job.id, name: s.delivery.job.task, error } });
    group.members.push(ref.node, ...blob);
  }
  return groups;
}

function decodeOutcome(raw: Buffer | undefined | null): StepOutcome | undefined {
  if (raw === undefined || raw === null || raw.length === 0) return undefined;
  const body = raw.subarray(1);
  if (raw[0] === 0x73) return { ok: true, value: decodeBody(body) };
  return { ok: false, failure: decodeBody(body) as StepFailure };
}

/**
 * Workflows on Redis: one HASH per workflow, enqueued by one script and
 * carried on by the fetch script's settlements (lua/lib/workflow.lua); the
 * end of a workflow is announced to its client after the script that ended it.
 */
export class Workflows {
  constructor(
    private readonly keys: Keys,
    private readonly results: Results,
  ) {}

  /** Adds the enqueue script of a whole workflow to a pipeline; throws ArgumentsTooLargeError for a job Redis would refuse. */
  addEnqueue(pipe: ChainableCommander, workflow: CompiledWorkflow): void {
    const keys = [this.keys.workflow(workflow.id), this.keys.jobs];
    for (const q of workflow.queues) keys.push(this.keys.stream(q), this.keys.delayed(q));
    const args: (string | number | Buffer)[] = [
      workflow.id,
      workflow.replyTo ?? '',
      Math.round(workflow.ttlMs ?? this.results.ttlMs),
      workflow.nodes.length,
    ];
    for (const node of workflow.nodes) args.push(describe(node));
    // Without enqueuedAt: each job's is when its step starts (a later step's queue wait starts then).
    for (const node of workflow.nodes) {
      if (node.job === undefined) continue;
      const packed = packStrings([encodeJob(node.job, false)]).subarray(1);
      // Checked before the script is queued: a throw here leaves the pipeline unsent.
      this.results.limit.checkJob(node.job.task, packed.length);
      args.push(packed);
    }
    callScript(pipe, 'enqueueWorkflow', keys, args);
  }

  /** Tells the clients of the workflows that ended (ids) that their outcome is ready. */
  async announce(redis: Redis, ended: readonly { id: string; reply: string }[]): Promise<void> {
    const pipe = redis.pipeline();
    for (const { id, reply } of ended) if (reply !== '') this.results.addAnnouncement(pipe, reply, [id]);
    if (pipe.length === 0) return;
    for (const [err] of (await pipe.exec()) ?? []) if (err) throw err;
  }

  /**
   * Those of `ids` that name a workflow with a record (as `read` finds one), in one round trip: a revoke
   * of thousands of ids that name no job would otherwise read for a workflow one id at a time.
   */
  async withRecords(redis: Redis, ids: Iterable<string>): Promise<Set<string>> {
    const asked = [...ids];
    const found = new Set<string>();
    if (asked.length === 0) return found;
    const pipe = redis.pipeline();
    for (const id of asked) pipe.hexists(this.keys.workflow(id), 'state');
    const replies = (await pipe.exec()) ?? [];
    asked.forEach((id, i) => {
      const [err, has] = replies[i] ?? [new Error('no reply to HEXISTS')];
      if (err) throw err;
      if (Number(has) === 1) found.add(id);
    });
    return found;
  }

  /** Workflow `id`'s record with every node; undefined without one. */
  async read(redis: Redis, id: string): Promise<WorkflowRecord | undefined> {
    const all = await redis.hgetallBuffer(this.keys.workflow(id));
    const state = all.state;
    if (state === undefined) return undefined;
    const record = this.head(id, state, all.out ?? null, all.fgroup ?? null);
    const nodes: WorkflowNodeRecord[] = [];
    // Every job node's meta names the same queues (the workflow's): read from the first.
    let queues: readonly string[] | undefined;
    for (let i = 0; Object.hasOwn(all, `n:${i}`); i++) {
      const raw = (all[`n:${i}`] as Buffer).toString();
      const v = raw.slice(2).split(' ').map(Number);
      const node: WorkflowNodeRecord = {
        index: i,
        kind: KIND_OF.get(raw[0] ?? '') ?? 'task',
        parent: v[0] ?? -1,
        pos: v[1] ?? 0,
        first: v[2] ?? -1,
        count: v[3] ?? 0,
        onSuccess: v[8] ?? -1,
        onError: v[9] ?? -1,
      };
      const body = all[`j:${i}`];
      if (body !== undefined) {
        // The entry's fields, name then value (only the text ones are read here).
        const values = decodeBody(body) as unknown[];
        node.jobId = String(values[1]);
        node.task = String(values[3]);
        queues ??= workflowOfMeta(String(values[11]))?.queues ?? [];
        const queue = queues[v[4] ?? -1];
        if (queue !== undefined) node.queue = queue;
      }
      const ended = decodeOutcome(all[`v:${i}`]);
      if (ended !== undefined) node.ended = ended;
      nodes.push(node);
    }
    const pending = nodes.filter((n) => n.jobId !== undefined && n.ended === undefined);
    if (pending.length > 0) {
      const places = await redis.hmget(this.keys.jobs, ...pending.map((n) => n.jobId as string));
      pending.forEach((n, i) => (n.placed = places[i] !== null));
    }
    record.nodes = nodes;
    return record;
  }

  /** Adds the read of workflow `id`'s outcome to a pipeline (Results reads it for ids without a result). */
  addOutcomeRead(pipe: ChainableCommander, id: string): void {
    pipe.hmgetBuffer(this.keys.workflow(id), 'state', 'out', 'fgroup');
  }

  /** Reads workflow `id`'s outcome alone (addOutcomeRead's command); resolves with the reply for outcomeFrom. */
  readOutcome(redis: Redis, id: string): Promise<unknown> {
    return redis.hmgetBuffer(this.keys.workflow(id), 'state', 'out', 'fgroup');
  }

  /** Workflow `id`'s outcome as a result record, from addOutcomeRead's reply; undefined without a record. */
  outcomeFrom(id: string, reply: unknown): ResultRecord | undefined {
    const [state, out, fgroup] = (reply ?? []) as (Buffer | null | undefined)[];
    return state === null || state === undefined
      ? undefined
      : workflowResult(this.head(id, state, out ?? null, fgroup ?? null));
  }

  private head(id: string, state: Buffer, out: Buffer | null, fgroup: Buffer | null): WorkflowRecord {
    const record: WorkflowRecord = { id, state: state.toString() as WorkflowState };
    if (out !== null && out.length > 0) {
      const value = decodeBody(out);
      if (record.state === 'SUCCESS') record.value = value;
      else record.failure = value as StepFailure;
    }
    if (fgroup !== null) record.failedGroup = Number(fgroup.toString());
    return record;
  }
}
