import { decodeBody, encodeBody } from '../../protocol/codec.js';
import { packList, prependArg } from '../../workflow/msgpack-list.js';
import { ExpiryHeap } from './expiry-heap.js';
import { workflowResult } from '../../workflow/record.js';
import type {
  CompiledWorkflow,
  StepFailure,
  StepOutcome,
  WorkflowNode,
  WorkflowNodeRecord,
  WorkflowRecord,
  WorkflowRef,
  WorkflowState,
} from '../types.js';
import type { NewJob, ResultRecord, Settlement } from '../types.js';

/** How a node ended: its value or failure as msgpack, as Redis keeps it. */
interface Ended {
  ok: boolean;
  blob: Buffer;
}

interface Flow {
  id: string;
  nodes: WorkflowNode[];
  reply: string;
  ttlMs: number;
  expiresAt: number;
  state: WorkflowState;
  out?: Ended;
  failedGroup?: number;
  ended: Map<number, Ended>;
  counts: Map<number, number>;
  /** Callbacks started and not ended: the record expires once the workflow ended and this is 0. */
  open: number;
}

/** What the workflows need of the broker: add a job (as MemoryState.place does), and tell a client a workflow ended. */
export interface FlowHost {
  enqueue(job: NewJob): void;
  finished(result: ResultRecord, reply: string, ttlMs: number): void;
}

/**
 * The memory twin of lua/lib/workflow.lua: the same nodes, the same rules
 * (a job's outcome counted once, a group's results in member order, a
 * chain's next step started once), run synchronously inside a settlement.
 */
export class MemoryWorkflows {
  private readonly flows = new Map<string, Flow>();
  /**
   * The ended workflows by expiry: each call drops those due, and only those. A scan of every
   * flow per workflow added made a bulk of jobs with callbacks quadratic (40,000 took 45 s), and
   * kept the ended ones for good once no workflow was added.
   */
  private readonly expiries = new ExpiryHeap<string>();

  /** A workflow with this id has a record (pending, or ended and not expired). */
  has(id: string, now: number): boolean {
    return this.live(id, now) !== undefined;
  }

  add(workflow: CompiledWorkflow, ttlMs: number, now: number, host: FlowHost): void {
    this.sweep(now);
    const flow: Flow = {
      id: workflow.id,
      nodes: workflow.nodes,
      reply: workflow.replyTo ?? '',
      ttlMs,
      // Kept while pending (a step may run or wait longer than the TTL): the TTL runs from its end.
      expiresAt: Number.POSITIVE_INFINITY,
      state: 'PENDING',
      ended: new Map(),
      counts: new Map(),
      open: 0,
    };
    this.flows.set(flow.id, flow);
    this.start(flow, 0, undefined, now, host);
  }

  /** Records the workflow jobs these settlements end, and starts what comes next (with a host made for the first). */
  settle(settlements: readonly Settlement[], now: number, hostOf: () => FlowHost): void {
    this.sweep(now);
    let host: FlowHost | undefined;
    for (const s of settlements) {
      if ((s.kind !== 'ack' && s.kind !== 'dead') || s.outcome === undefined) continue;
      const ref = s.delivery.job.workflow;
      if (ref !== undefined) this.record(ref, s.outcome, now, (host ??= hostOf()));
    }
  }

  /**
   * A member that left without a node's settlement (revoked or removed while
   * it waited, a poison job buried by a recovery) failed: what follows it
   * carries on as after a failure, or its workflow would wait for ever.
   */
  leave(ref: WorkflowRef, failure: StepFailure, now: number, host: FlowHost): void {
    this.record(ref, { ok: false, failure }, now, host);
  }

  private record(ref: WorkflowRef, outcome: StepOutcome, now: number, host: FlowHost): void {
    const flow = this.live(ref.id, now);
    // Gone (expired), or this node already ended (the job ran twice): nothing more to do.
    if (flow === undefined || flow.ended.has(ref.node) || flow.nodes[ref.node] === undefined) return;
    const ended = blobOf(outcome);
    flow.ended.set(ref.node, ended);
    const callback = isCallback(flow, ref.node);
    if (callback) flow.open--;
    this.end(flow, ref.node, ended, now, host);
    // A callback that ended after its workflow: the TTL runs from the last one's end.
    if (callback && flow.state !== 'PENDING' && flow.open === 0) this.expireAt(flow, now);
  }

  read(id: string, withNodes: boolean, now: number, placed: (jobId: string) => boolean): WorkflowRecord | undefined {
    const flow = this.live(id, now);
    if (flow === undefined) return undefined;
    const record: WorkflowRecord = { id, state: flow.state };
    if (flow.out !== undefined) {
      const value = decodeBody(flow.out.blob);
      if (flow.state === 'SUCCESS') record.value = value;
      else record.failure = value as StepFailure;
    }
    if (flow.failedGroup !== undefined) record.failedGroup = flow.failedGroup;
    if (!withNodes) return record;
    record.nodes = flow.nodes.map((node, index) => {
      const out: WorkflowNodeRecord = {
        index,
        kind: node.kind,
        parent: node.parent,
        pos: node.pos,
        first: node.first,
        count: node.count,
        onSuccess: node.onSuccess,
        onError: node.onError,
      };
      if (node.job !== undefined) {
        out.jobId = node.job.id;
        out.task = node.job.task;
        out.queue = node.job.queue;
      }
      const ended = flow.ended.get(index);
      if (ended !== undefined) out.ended = outcomeOf(ended);
      else if (node.job !== undefined) out.placed = placed(node.job.id);
      return out;
    });
    return record;
  }

  private live(id: string, now: number): Flow | undefined {
    this.sweep(now);
    const flow = this.flows.get(id);
    if (flow !== undefined && flow.expiresAt <= now) {
      this.flows.delete(id);
      return undefined;
    }
    return flow;
  }

  /** The workflow ended (and the callbacks it started): its TTL runs from `now`. */
  private expireAt(flow: Flow, now: number): void {
    flow.expiresAt = now + flow.ttlMs;
    this.expiries.push(flow.expiresAt, flow.id);
  }

  /** Drops the workflows whose TTL ran out by `now`. */
  private sweep(now: number): void {
    if ((this.expiries.nextAt ?? Infinity) > now) return;
    for (const id of this.expiries.takeDue(now)) {
      const flow = this.flows.get(id);
      if (flow !== undefined && flow.expiresAt <= now) this.flows.delete(id);
    }
  }

  private start(flow: Flow, i: number, input: Buffer | undefined, now: number, host: FlowHost): void {
    const node = flow.nodes[i];
    if (node === undefined) return;
    if (node.job !== undefined) {
      // A callback may wait or run longer than the TTL after the workflow's end: the record waits for it.
      if (isCallback(flow, i)) flow.open++;
      // Enqueued now: a later step's queue wait counts from its start, not from the workflow's enqueue.
      const job: NewJob = { ...node.job, enqueuedAt: now };
      if (input !== undefined && !node.immutable) job.payload = prependArg(job.payload, input);
      host.enqueue(job);
    } else if (node.kind === 'group') {
      for (let k = 0; k < node.count; k++) this.start(flow, node.first + k, input, now, host);
    } else {
      this.start(flow, node.first, input, now, host);
    }
  }

  private end(flow: Flow, i: number, ended: Ended, now: number, host: FlowHost): void {
    const node = flow.nodes[i] as WorkflowNode;
    if (node.job !== undefined) {
      if (ended.ok && node.onSuccess >= 0) this.start(flow, node.onSuccess, ended.blob, now, host);
      if (!ended.ok && node.onError >= 0) this.start(flow, node.onError, ended.blob, now, host);
    }
    if (node.parent < 0) {
      if (i !== 0) return;
      flow.state = ended.ok ? 'SUCCESS' : 'FAILURE';
      flow.out = ended;
      if (flow.open === 0) this.expireAt(flow, now);
      const record = this.read(flow.id, false, now, () => false) as WorkflowRecord;
      host.finished(workflowResult(record), flow.reply, flow.ttlMs);
      return;
    }
    const parent = flow.nodes[node.parent] as WorkflowNode;
    const endParent = (e: Ended): void => {
      flow.ended.set(node.parent, e);
      this.end(flow, node.parent, e, now, host);
    };
    if (parent.kind === 'group') {
      const count = (flow.counts.get(node.parent) ?? 0) + 1;
      flow.counts.set(node.parent, count);
      if (count !== parent.count) return;
      const children: Ended[] = [];
      for (let k = 0; k < parent.count; k++)
        children.push(flow.ended.get(parent.first + k) ?? { ok: true, blob: encodeBody(null) });
      const failed = children.find((c) => !c.ok);
      if (failed !== undefined) {
        flow.failedGroup = node.parent;
        endParent(failed);
      } else endParent({ ok: true, blob: packList(children.map((c) => c.blob)) });
    } else if (!ended.ok || node.pos === parent.count - 1) endParent(ended);
    else this.start(flow, parent.first + node.pos + 1, ended.blob, now, host);
  }
}

/** Node `i` is a job's callback: outside the tree (no parent), and not its root. */
function isCallback(flow: Flow, i: number): boolean {
  return i !== 0 && (flow.nodes[i] as WorkflowNode).parent < 0;
}

function blobOf(outcome: StepOutcome): Ended {
  return outcome.ok ? { ok: true, blob: encodeBody(outcome.value) } : { ok: false, blob: encodeBody(outcome.failure) };
}

function outcomeOf(ended: Ended): StepOutcome {
  const value = decodeBody(ended.blob);
  return ended.ok ? { ok: true, value } : { ok: false, failure: value as StepFailure };
}
