import { batchEvents, type EventBatch } from '../../events/event-batch.js';
import type { Logger } from 'pino';
import { BrokerClosedError, BrokerRefusedError, OptionError, messageOf } from '../../errors.js';
import { defaultLogger } from '../../logger.js';
import type {
  JobPage,
  ListedState,
  AnnouncedResults,
  Broker,
  BrokerOptions,
  ControlReply,
  ControlRequest,
  DeadJob,
  DeadSetChange,
  DeadWorkflowJob,
  EventPage,
  Delivery,
  JobLocation,
  FetchReply,
  FetchRequest,
  HeartbeatReply,
  LeaderLease,
  NewJob,
  NodeInfo,
  NodeUpdate,
  PausedQueue,
  QueueCounts,
  JobRecord,
  ResultRecord,
  RevokedJob,
  RevokeOptions,
  RevokeOutcome,
  Settlement,
  SlotGrant,
  SlotRequest,
  WaitReply,
} from '../types.js';
import type { ClaimReply, EventCarrier, PublishReply, ScheduleDefinition, ScheduleState, TickClaim } from '../types.js';
import { resolveBrokerOptions, type ResolvedBrokerOptions } from '../broker-options.js';
import { LEADER_RELEASED } from '../control-codec.js';
import { checkDeadChange, checkDeadLimit } from '../dead-set-checks.js';
import { checkPage } from '../job-page-checks.js';
import { checkQueueName, throwOptionError } from '../../job-option-checks.js';
import { checkPause, pausedFromMember, pausedMember, sortPaused } from '../paused-queues.js';
import { DEFAULT_RATE } from '../rate-setting.js';
import { blockUntil } from './block.js';
import { copyJob } from './job-copy.js';
import { acquireState, releaseState, type MemoryState } from './memory-state.js';
import { applySettlements, flowHost, withoutSlot } from './settle.js';
import { poisonFailure, poisonRecord, purgedFailure, removedFailure, revokedFailure } from '../member-failures.js';
import type { CompiledWorkflow, WorkflowNodeRecord, WorkflowRecord } from '../types.js';
import { workflowResult } from '../../workflow/record.js';
import { memberOfJobId } from '../../workflow/member-id.js';
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
import { resultTtlOf } from '../../job-option-checks.js';
import { randomUUID } from 'node:crypto';

/** Which state a memory cursor belongs to. */
const CURSOR_PREFIX = new Map<ListedState, string>([
  ['waiting', 'w'],
  ['delayed', 'd'],
  ['dead', 'x'],
]);

/**
 * The embedded broker (`memory://[name]`): one process, the semantics of the
 * Redis one (docs/architecture.md) — a delivery stays reserved by its node until
 * settled, given-back and recovered jobs are served first, delayed jobs are
 * promoted when due, dead letters, results with a TTL, leases and recovery
 * with fencing — so the demo and tests on memory:// behave as production
 * does. Every handle opened on the same name (and namespace) in this process
 * shares one state. Blocked waits sleep until a change or the next due time.
 */
export class MemoryBroker implements Broker {
  readonly displayUrl: string;
  readonly leaseMs: number;
  private readonly resultTtl: number;
  private readonly deadMax: number;
  private readonly revokeTtl: number;
  readonly revokeMax: number;
  private readonly eventsMaxLen: number;
  private eventCarrier: EventCarrier | undefined;
  private readonly log: Logger;
  private closed = false;
  /** Ends this handle's blocked waits (on close). */
  private readonly cancels = new Set<() => void>();

  private constructor(
    private readonly key: string,
    private readonly shared: MemoryState,
    url: string,
    settings: ResolvedBrokerOptions,
    logger: Logger | undefined,
  ) {
    this.displayUrl = url;
    this.leaseMs = settings.leaseMs;
    this.resultTtl = settings.resultTtl;
    this.deadMax = settings.deadMax;
    this.revokeTtl = settings.revokeTtl;
    this.revokeMax = settings.revokeMax;
    this.eventsMaxLen = settings.eventsMaxLen;
    this.log = (logger ?? defaultLogger()).child({ component: 'memory-broker', broker: url });
  }

  /** A handle on the broker named by `url` (`memory://` alone is `memory://default`). */
  static open(url: string, options: BrokerOptions = {}): MemoryBroker {
    if (typeof url !== 'string' || !url.startsWith('memory://'))
      throw new OptionError('broker', url, 'a memory://[name] URL');
    const name = url.slice('memory://'.length) || 'default';
    const settings = resolveBrokerOptions(options);
    // A pair, not "<namespace>/<name>": namespace "a/b" with name "c" is not namespace "a" with name "b/c".
    const key = JSON.stringify([settings.namespace, name]);
    return new MemoryBroker(key, acquireState(key), `memory://${name}`, settings, options.logger);
  }

  /**
   * The state this handle shares; BrokerClosedError once it is closed, as the
   * Redis broker's calls fail then: else a closed handle would go on taking
   * jobs into a state it released (dropped with the last handle), and lose them.
   */
  private get state(): MemoryState {
    if (this.closed) throw new BrokerClosedError();
    return this.shared;
  }

  async connect(): Promise<void> {
    if (this.closed) throw new BrokerClosedError();
  }

  /** Ends this handle's blocked waits; the last handle on a name drops its state. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const cancel of [...this.cancels]) cancel();
    releaseState(this.key, this.shared);
  }

  // producer

  async enqueue(jobs: readonly NewJob[], workflows: readonly CompiledWorkflow[] = []): Promise<(string | undefined)[]> {
    // Every queue checked before anything is added.
    for (const workflow of workflows) for (const q of workflow.queues) checkQueueName('queue', q, throwOptionError);
    const out = this.enqueueNow(jobs);
    if (workflows.length === 0) return out;
    const touched = new Set<string>();
    const now = Date.now();
    const host = flowHost(this.state, touched, now);
    for (const workflow of workflows) {
      // Known from its enqueue, as on Redis: the queues of its later steps too.
      for (const q of workflow.queues) this.state.known.add(q);
      if (!this.state.workflows.has(workflow.id, now))
        this.state.workflows.add(workflow, workflow.ttlMs ?? this.resultTtl, now, host);
    }
    this.state.waiters.changed(touched);
    return out;
  }

  /** Synchronous: claimTicks enqueues in the same step as its claim. */
  private enqueueNow(jobs: readonly NewJob[]): (string | undefined)[] {
    for (const job of jobs) checkQueueName('queue', job.queue, throwOptionError);
    const now = Date.now();
    const touched = new Set<string>();
    const out: (string | undefined)[] = [];
    for (const input of jobs) {
      const existing = this.state.duplicateOf(input, now);
      out.push(existing);
      if (existing !== undefined) continue;
      this.state.added(input, now);
      this.state.place(input, now, touched);
    }
    this.state.waiters.changed(touched);
    return out;
  }

  // results

  async getWorkflow(id: string): Promise<WorkflowRecord | undefined> {
    return this.state.workflows.read(id, true, Date.now(), this.state.placedCheck());
  }

  async getResult(id: string): Promise<ResultRecord | undefined> {
    return this.resultOf(id, Date.now());
  }

  /** Never: memory has no bound here. */
  async isFull(): Promise<boolean> {
    if (this.closed) throw new BrokerClosedError();
    return false;
  }

  async getResults(ids: readonly string[]): Promise<(ResultRecord | undefined)[]> {
    const now = Date.now();
    return ids.map((id) => this.resultOf(id, now));
  }

  /** A job's stored result, else a workflow's state as a result (as the Redis broker reads a workflow's record). */
  private resultOf(id: string, now: number): ResultRecord | undefined {
    const stored = this.state.results.get(id, now);
    if (stored !== undefined) return stored;
    const flow = this.state.workflows.read(id, false, now, () => false);
    return flow === undefined ? undefined : workflowResult(flow);
  }

  async waitForResults(clientId: string, timeoutMs: number, signal?: AbortSignal): Promise<AnnouncedResults> {
    const results = this.state.results;
    const got = await blockUntil(
      () => results.takeReplies(clientId, Date.now()),
      (retry) => results.onAnnounce(clientId, retry),
      timeoutMs,
      signal,
      this.cancels,
    );
    return got ?? { records: [], gone: [], missed: false };
  }

  // jobs

  async locate(id: string): Promise<JobLocation | undefined> {
    return this.state.locate(id)?.location;
  }

  async removeWaiting(id: string): Promise<JobLocation | undefined> {
    const found = this.state.locate(id);
    if (found?.remove === undefined) return undefined;
    const job = found.remove();
    // Out for good, no result written: its unique key is free (job-index.ts take, on Redis).
    if (job !== undefined) this.state.ended(job, undefined, Date.now());
    if (job?.workflow !== undefined) {
      const now = Date.now();
      const touched = new Set<string>();
      this.state.workflows.leave(job.workflow, removedFailure(job), now, flowHost(this.state, touched, now));
      this.state.waiters.changed(touched);
    }
    return found.location;
  }

  // consumer

  async fetch(request: FetchRequest): Promise<FetchReply> {
    // Closed: refused before the carried events are taken (they stay with their carrier).
    const state = this.state;
    this.carried();
    const now = Date.now();
    const touched = new Set<string>();
    try {
      applySettlements({ state, resultTtl: this.resultTtl, deadMax: this.deadMax, now, touched }, request.settle);
    } catch (err) {
      // As settle(): the Consumer then sends the carried settlements on their own, to find the one at fault.
      state.waiters.changed(touched);
      throw new BrokerRefusedError(`the settlements were refused: ${messageOf(err)}`, { cause: err });
    }
    const queues = request.plan.map((p) => p.queue);
    // Gone (recovered): fenced. A lease that ran out and that none took is still the node's (heartbeat()).
    if (!state.reservations.isMember(request.nodeId)) {
      state.waiters.changed(touched);
      return { deliveries: [], nextDueAt: undefined, fenced: true };
    }
    for (const queue of queues) this.promote(queue, now, touched);
    const deliveries: Delivery[] = [];
    let left = Math.max(0, request.count);
    // First pass: each queue's quota (rd before main); second pass: leftovers in plan order.
    for (const { queue, quota } of request.plan)
      left -= this.reserve(request.nodeId, queue, Math.min(Math.max(0, quota), left), deliveries);
    for (const { queue } of request.plan) left -= this.reserve(request.nodeId, queue, left, deliveries);
    state.waiters.changed(touched);
    return { deliveries, nextDueAt: state.nextDueAt(queues), fenced: false };
  }

  async waitForWork(
    nodeId: string,
    queues: readonly string[],
    timeoutMs: number,
    signal: AbortSignal,
    count = 1,
  ): Promise<WaitReply> {
    const want = Math.max(1, count);
    const touched = new Set<string>();
    // Held for the whole wait: one that close() ends still answers.
    const state = this.state;
    const attempt = (): Delivery[] | undefined => {
      const now = Date.now();
      if (!state.reservations.isMember(nodeId)) return undefined;
      const deliveries: Delivery[] = [];
      let left = want;
      for (const queue of queues) {
        this.promote(queue, now, touched);
        left -= this.reserve(nodeId, queue, left, deliveries);
      }
      return deliveries.length > 0 ? deliveries : undefined;
    };
    const waiters = state.waiters;
    const got = await blockUntil(
      attempt,
      (retry) => {
        const waiter = { queues, attempt: retry };
        waiters.add(waiter);
        return () => waiters.remove(waiter);
      },
      queues.length === 0 ? 0 : timeoutMs,
      signal,
      this.cancels,
    );
    // Jobs promoted beyond what this call took are for the other waiters.
    waiters.changed(touched);
    return { deliveries: got ?? [], nextDueAt: state.nextDueAt(queues) };
  }

  async settle(settlements: readonly Settlement[]): Promise<void> {
    const state = this.state;
    this.carried();
    const touched = new Set<string>();
    try {
      applySettlements(
        { state, resultTtl: this.resultTtl, deadMax: this.deadMax, now: Date.now(), touched },
        settlements,
      );
    } catch (err) {
      // Nothing here is transient (no connection): the same settlements would fail again.
      throw new BrokerRefusedError(`the settlements were refused: ${messageOf(err)}`, { cause: err });
    } finally {
      state.waiters.changed(touched);
    }
  }

  // events

  carryEvents(carrier: EventCarrier): void {
    this.eventCarrier = carrier;
  }

  /** What a node's write carries with it, as the Redis broker's pipeline does. */
  private carried(): void {
    const carrier = this.eventCarrier;
    if (carrier === undefined) return;
    const batches = carrier.take();
    if (batches.length === 0) return;
    for (const batch of batches) this.state.events.append(batchEvents(batch), this.eventsMaxLen);
    carrier.carried();
  }

  async publishEvents(batch: EventBatch): Promise<void> {
    this.state.events.append(batchEvents(batch), this.eventsMaxLen);
  }

  async recentEvents(count: number): Promise<EventPage> {
    return this.state.events.recent(Math.max(0, count));
  }

  async readEvents(position: string, timeoutMs: number, signal?: AbortSignal): Promise<EventPage> {
    const log = this.state.events;
    const got = await blockUntil(
      () => log.after(position),
      (retry) => log.onAppend(retry),
      timeoutMs,
      signal,
      this.cancels,
    );
    return got ?? { events: [], position };
  }

  // membership

  async register(node: NodeInfo, adoptFrom?: string): Promise<number> {
    const now = Date.now();
    this.state.reservations.register(node, this.leaseMs, now);
    for (const queue of node.queues) this.state.known.add(queue);
    return adoptFrom === undefined ? 0 : Math.max(0, this.state.reservations.adopt(adoptFrom, node.id, now));
  }

  async updateNode(nodeId: string, update: NodeUpdate): Promise<boolean> {
    const node = this.state.reservations.nodes.get(nodeId);
    if (node === undefined || node.leaseUntil <= Date.now()) return false;
    if (update.concurrency !== undefined) node.info.concurrency = update.concurrency;
    return true;
  }

  async heartbeat(nodeId: string, queues: readonly string[], lead?: boolean): Promise<HeartbeatReply> {
    const now = Date.now();
    const reservations = this.state.reservations;
    const lapsed = reservations.renew(nodeId, this.leaseMs, now);
    if (lapsed === undefined) return { fenced: true, expired: [], nextDueAt: undefined };
    const reply: HeartbeatReply = {
      fenced: false,
      ...(lapsed > 0 ? { lapsedMs: lapsed } : {}),
      expired: reservations.expired(nodeId, now),
      nextDueAt: this.state.nextDueAt(queues),
      nextExpiryAt: reservations.nextExpiry(nodeId, now),
      control: this.state.control.take(nodeId, now),
    };
    if (this.state.control.postedSinceBeat(nodeId)) reply.controlPosted = true;
    if (lead === true) {
      const lease = this.state.leadership.stand(nodeId, this.leaseMs, now);
      reply.leader = lease.leader;
      if (lease.until !== undefined && (reply.nextExpiryAt === undefined || lease.until < reply.nextExpiryAt))
        reply.nextExpiryAt = lease.until;
    }
    return reply;
  }

  async leader(): Promise<LeaderLease | undefined> {
    return this.state.leadership.holder(Date.now());
  }

  async recover(deadNodeId: string, byNodeId: string, maxRedeliveries: number): Promise<number> {
    // Only an expired lease is recovered: a live node keeps its jobs.
    const node = this.state.reservations.nodes.get(deadNodeId);
    if (node === undefined || node.leaseUntil > Date.now()) return 0;
    const moved = this.requeueAll(deadNodeId, maxRedeliveries);
    if (moved > 0)
      this.log.info(
        { deadNode: deadNodeId, by: byNodeId, jobs: moved },
        'recovered the jobs of a node whose lease expired',
      );
    return moved;
  }

  /** Leaves the cluster; anything still reserved goes back to its queue first (redeliveries + 1). */
  async unregister(nodeId: string): Promise<void> {
    this.requeueAll(nodeId, Infinity);
  }

  async listNodes(): Promise<NodeInfo[]> {
    const now = Date.now();
    return [...this.state.reservations.nodes.values()]
      .filter((n) => n.leaseUntil > now)
      .map((n) => structuredClone(n.info));
  }

  // control

  async sendControl(nodeIds: readonly string[], request: ControlRequest, ttlMs: number): Promise<string[]> {
    const now = Date.now();
    const posted = nodeIds.filter((id) => this.state.reservations.holdsLease(id, now));
    for (const id of posted) this.state.control.post(id, request, ttlMs, now);
    return posted;
  }

  async watchControl(wake: (nodeId: string) => void): Promise<() => Promise<void>> {
    const unwatch = this.state.control.watch(wake);
    return async () => {
      unwatch();
    };
  }

  async takeControl(nodeId: string): Promise<ControlRequest[]> {
    return this.state.control.take(nodeId, Date.now());
  }

  async replyControl(requestId: string, reply: ControlReply): Promise<void> {
    this.state.control.reply(requestId, reply, Date.now());
  }

  async waitForControlReplies(requestId: string, count: number, timeoutMs: number): Promise<ControlReply[]> {
    const board = this.state.control;
    const out: ControlReply[] = [];
    await blockUntil(
      () => {
        out.push(...board.collect(requestId, count - out.length));
        return out.length >= count ? out : undefined;
      },
      (retry) => board.listen(requestId, retry),
      timeoutMs,
      undefined,
      this.cancels,
    );
    return out;
  }

  // revokes

  async revoke(ids: readonly string[], options: RevokeOptions): Promise<RevokeOutcome[]> {
    const now = Date.now();
    const touched = new Set<string>();
    const unique = [...new Set(ids)];
    // The ids of jobs first, all of them, as on Redis (revokes.ts): an id that is a job's and a workflow's
    // (a job given the workflow's id as its own) revokes the job, and a step named before a job of its
    // workflow in the same call is looked at once that job's revoke failed the workflow.
    const outcomes = unique.map((id) =>
      this.workflowEnded(id, now) ? { id, outcome: 'unknown' as const } : this.revokeOne(id, now, touched),
    );
    const revoked = unique.filter((_, i) => outcomes[i]?.outcome === 'revoked');
    unique.forEach((id, i) => {
      if (outcomes[i]?.outcome !== 'unknown') return;
      const flow = this.revokeWorkflow(id, options, now, touched, revoked);
      const step = flow === undefined ? this.revokeStep(id, now, touched) : undefined;
      if (step?.outcome === 'revoked') revoked.push(id);
      outcomes[i] = flow ?? step ?? { id, outcome: 'unknown' };
    });
    this.state.waiters.changed(touched);
    if (revoked.length === 0) return outcomes;
    const memory = this.state.revoked;
    for (const id of revoked) {
      memory.delete(id);
      memory.set(id, now);
    }
    this.forgetRevoked(now);
    const nodes = (await this.listNodes()).map((n) => n.id);
    if (nodes.length > 0)
      await this.sendControl(
        nodes,
        revokeRequest(randomUUID(), revoked, options, now + this.revokeTtl),
        revokeRequestTtl(this.leaseMs),
      );
    return outcomes;
  }

  /**
   * True when `id`'s stored result is a workflow's outcome (no job's: its queue is none), which this
   * broker keeps under the workflow's id: the workflow, not a job, is what a revoke by it finds.
   */
  private workflowEnded(id: string, now: number): boolean {
    return this.state.results.get(id, now)?.queue === '';
  }

  /** Revokes a workflow's members that may still run (as revokes.ts does), adding their ids to `revoked`; undefined when `id` is no workflow's. */
  private revokeWorkflow(
    id: string,
    options: RevokeOptions,
    now: number,
    touched: Set<string>,
    revoked: string[],
  ): RevokeOutcome | undefined {
    const record = this.state.workflows.read(id, true, now, this.state.placedCheck());
    if (record === undefined) return undefined;
    let members = 0;
    for (const member of workflowMembers(record)) {
      const memberId = member.jobId as string;
      const at = this.state.revoked.get(memberId);
      const before = at !== undefined && at + this.revokeTtl > now;
      const outcome = this.revokeOne(memberId, now, touched, member);
      if (outcome.outcome !== 'revoked') continue;
      revoked.push(memberId);
      if (revokedNow(outcome, options, before)) members++;
    }
    return workflowOutcome(record, members);
  }

  /** Revokes a workflow step not enqueued yet by its own id (as revokes.ts does); undefined when `id` is no member's. */
  private revokeStep(id: string, now: number, touched: Set<string>): RevokeOutcome | undefined {
    const named = memberOfJobId(id);
    if (named === undefined) return undefined;
    const record = this.state.workflows.read(named.workflowId, true, now, this.state.placedCheck());
    const step = record === undefined ? undefined : stepToRevoke(record, id, named.index);
    if (step === undefined || 'outcome' in step) return step?.outcome;
    const outcome = this.revokeOne(id, now, touched, step.member);
    return stepOutcome(outcome, named.workflowId);
  }

  /** `unstarted`: `id` is this workflow member's, which may be in no queue yet (revoked all the same). */
  private revokeOne(id: string, now: number, touched: Set<string>, unstarted?: WorkflowNodeRecord): RevokeOutcome {
    const stored = this.state.results.get(id, now);
    const finished = finishedOutcome(id, stored);
    if (finished !== undefined) return finished;
    let job: JobRecord | undefined;
    for (const [name, q] of this.state.allQueues()) {
      job = q.remove(id);
      if (job !== undefined) {
        touched.add(name);
        break;
      }
    }
    if (job?.workflow !== undefined)
      this.state.workflows.leave(job.workflow, revokedFailure(job), now, flowHost(this.state, touched, now));
    const held = job ?? this.state.reservations.findJob(id)?.delivery.job;
    const record = recordToRevoke(id, stored, held, unstarted, now);
    if (record === undefined) return { id, outcome: 'unknown' };
    const ttl = resultTtlOf(held?.options ?? {}, this.resultTtl);
    this.state.results.set(record, ttl, now);
    // Taken out of its queue it ended (revokes.ts marks it likewise): its own id stays known while its result is kept.
    if (job !== undefined) this.state.ended(job, job.options.ignoreResult === true ? undefined : now + ttl, now);
    // Taken out of its queue, it is settled by no node: the waiting client hears of it now.
    if (job?.replyTo !== undefined && job.options.ignoreResult !== true) this.state.results.announce(job.replyTo, id);
    const outcome: RevokeOutcome = { id, outcome: 'revoked' };
    if (stored !== undefined) outcome.state = stored.state;
    if (job !== undefined) outcome.removed = true;
    if (held?.workflow !== undefined) outcome.workflow = held.workflow.id;
    return outcome;
  }

  async listRevoked(since?: number): Promise<RevokedJob[]> {
    const now = Date.now();
    this.forgetRevoked(now);
    const out: RevokedJob[] = [];
    for (const [id, revokedAt] of this.state.revoked)
      if (since === undefined || revokedAt >= since) out.push({ id, revokedAt, expiresAt: revokedAt + this.revokeTtl });
    return out;
  }

  /** Drops revoked ids past the ttl, then the oldest past the count (the map is in revoke order). */
  private forgetRevoked(now: number): void {
    const memory = this.state.revoked;
    for (const [id, at] of memory) {
      if (at + this.revokeTtl > now && memory.size <= this.revokeMax) break;
      memory.delete(id);
    }
  }

  // pauses

  async pauseQueue(queue: string, node?: string): Promise<boolean> {
    checkPause(queue, node);
    const member = pausedMember(queue, node);
    if (this.state.paused.has(member)) return false;
    this.state.paused.add(member);
    this.flagLiveNodes();
    return true;
  }

  async resumeQueue(queue: string, node?: string): Promise<number> {
    checkPause(queue, node);
    let lifted = 0;
    for (const member of [...this.state.paused]) {
      const p = pausedFromMember(member);
      if (p.queue === queue && (node === undefined || p.node === node) && this.state.paused.delete(member)) lifted++;
    }
    if (lifted > 0) this.flagLiveNodes();
    return lifted;
  }

  /** A setting changed: every live node reads the settings again at its next beat, told of it or not. */
  private flagLiveNodes(): void {
    const now = Date.now();
    const live = [...this.state.reservations.nodes.keys()].filter((id) => this.state.reservations.holdsLease(id, now));
    this.state.control.flag(live);
  }

  async listPaused(): Promise<PausedQueue[]> {
    return sortPaused([...this.state.paused].map(pausedFromMember));
  }

  // admin

  async knownQueues(): Promise<string[]> {
    return [...this.state.known].sort();
  }

  async counts(queues: readonly string[]): Promise<QueueCounts[]> {
    return queues.map((queue) => {
      const q = this.state.peek(queue);
      if (q === undefined) return { queue, waiting: 0, reserved: 0, delayed: 0, dead: 0 };
      return { queue, waiting: q.waiting, reserved: q.reserved, delayed: q.delayedCount, dead: q.deadCount };
    });
  }

  async purge(queue: string): Promise<number> {
    const dropped = this.state.peek(queue)?.purge() ?? [];
    // Ended without a result (purgeQueue-n.lua likewise): their unique keys are free.
    const now = Date.now();
    const touched = new Set<string>([queue]);
    for (const job of dropped) this.state.ended(job, undefined, now);
    // Workflow members fail in their workflows once all are out: what that starts is not purged.
    for (const job of dropped)
      if (job.workflow !== undefined)
        this.state.workflows.leave(job.workflow, purgedFailure(job, queue), now, flowHost(this.state, touched, now));
    this.state.waiters.changed(touched);
    return dropped.length;
  }

  async listDead(queue: string, limit: number): Promise<DeadJob[]> {
    checkDeadLimit(limit);
    return (this.state.peek(queue)?.listDead(limit) ?? []).map((d) => ({
      job: copyJob(d.job),
      reason: d.reason,
      diedAt: d.diedAt,
    }));
  }

  /** Cursors are positions (`w:`, `d:`, `x:` and the offset): jobs taken meanwhile shift what the next page starts at. */
  async listJobs(queue: string, state: ListedState, limit: number, cursor?: string): Promise<JobPage> {
    checkPage(state, limit);
    const prefix = CURSOR_PREFIX.get(state) ?? 'w';
    let from = 0;
    if (cursor !== undefined) {
      const m = /^([wdx]):(\d{1,15})$/.exec(cursor);
      if (m === null || m[1] !== prefix)
        throw new OptionError('cursor', cursor, `a cursor printed by a previous page of ${state} jobs`);
      from = Number(m[2]);
    }
    const listed = this.state.peek(queue)?.page(state, from, limit) ?? [];
    const jobs = listed.map((l) => ({ ...l, job: copyJob(l.job) }));
    return { jobs, next: jobs.length < limit ? undefined : `${prefix}:${from + jobs.length}` };
  }

  async retryDead(queue: string, ids: readonly string[] | undefined): Promise<number> {
    return (await this.changeDead(queue, 'retry', ids)).count;
  }

  async purgeDead(queue: string, ids?: readonly string[]): Promise<number> {
    return (await this.changeDead(queue, 'delete', ids)).count;
  }

  async changeDead(
    queue: string,
    action: 'retry' | 'delete',
    ids: readonly string[] | undefined,
  ): Promise<DeadSetChange> {
    checkDeadChange(action, ids);
    const q = this.state.peek(queue);
    if (q === undefined) return { count: 0, moved: [], inWorkflow: [], inUse: [] };
    const inWorkflow: DeadWorkflowJob[] = [];
    const inUse = new Set<string>();
    // Ids that wait, are delayed or run (one scan), and those this call requeues.
    const placed = this.state.placedCheck();
    const requeued = new Set<string>();
    // A retry leaves a workflow's job dead (changeDead-3.lua): its workflow recorded its failure already;
    // and a job whose id a live job has: two live jobs of one id would be one to revokes and lookups.
    const taken = q.unbury(ids, ({ job }) => {
      if (action === 'delete') return true;
      if (job.workflow !== undefined) {
        inWorkflow.unshift({ id: job.id, workflow: job.workflow.id });
        return false;
      }
      if (requeued.has(job.id) || placed(job.id)) {
        inUse.add(job.id);
        return false;
      }
      requeued.add(job.id);
      return true;
    });
    // Listed: back id by id in the order listed (changeDead-3.lua), each id's oldest first (a stable sort).
    const order = new Map<string, number>();
    for (const [i, id] of (ids ?? []).entries()) if (!order.has(id)) order.set(id, i);
    if (ids !== undefined) taken.sort((a, b) => (order.get(a.job.id) ?? 0) - (order.get(b.job.id) ?? 0));
    if (action === 'retry') {
      const now = Date.now();
      for (const { job } of taken) {
        this.state.requeued(job, now);
        // Its stored failure is no longer its outcome: it reads as waiting, and a wait waits for the new run (changeDead-3.lua).
        this.state.results.delete(job.id, job.replyTo);
        // Its rate-limit turn was spent by the run that died: it asks its bucket again (changeDead-3.lua).
        q.main.push(withoutSlot({ ...job, attempt: 0, redeliveries: 0 }));
      }
      this.state.waiters.changed([queue]);
    }
    const found = new Set(taken.map((d) => d.job.id));
    return {
      count: taken.length,
      moved: [...order.keys()].filter((id) => found.has(id)),
      inWorkflow,
      inUse: [...inUse],
    };
  }

  // rate limits

  async acquireSlots(requests: readonly SlotRequest[]): Promise<SlotGrant[]> {
    return this.state.rates.acquire(requests, Date.now());
  }

  async rateLimits(): Promise<Map<string, string>> {
    return this.state.rates.list();
  }

  async setRateLimit(task: string, rate: string): Promise<number> {
    const touched = new Set<string>();
    const before = this.state.rates.list().get(task);
    const n = this.state.rates.setRate([...this.state.allQueues()], task, rate, Date.now(), touched);
    this.state.waiters.changed(touched);
    if (rate !== DEFAULT_RATE || before !== undefined) this.flagLiveNodes();
    return n;
  }

  /** Moves due delayed jobs of `queue` to its main list. */
  private promote(queue: string, now: number, touched: Set<string>): void {
    if ((this.state.peek(queue)?.promote(now) ?? 0) > 0) touched.add(queue);
  }

  /** Reserves up to `max` jobs of `queue` for `nodeId` (rd first); returns how many. */
  private reserve(nodeId: string, queue: string, max: number, out: Delivery[]): number {
    const q = this.state.peek(queue);
    if (q === undefined || max <= 0) return 0;
    let n = 0;
    for (let job = q.take(); job !== undefined; job = n < max ? q.take() : undefined) {
      out.push(this.state.reservations.reserve(nodeId, queue, job));
      n++;
    }
    return n;
  }

  /** A node's reservations go back to their queues (served first), or to the dead set past `maxRedeliveries`. */
  private requeueAll(nodeId: string, maxRedeliveries: number): number {
    const now = Date.now();
    const touched = new Set<string>();
    const held = this.state.reservations.removeNode(nodeId);
    this.state.control.forget(nodeId);
    // A node that left leads nothing: the others that stand for leader are woken to take the lease.
    if (this.state.leadership.release(nodeId)) this.state.control.wake(LEADER_RELEASED);
    for (const { delivery } of held) {
      const q = this.state.queue(delivery.queue);
      const job = { ...delivery.job, redeliveries: delivery.job.redeliveries + 1 };
      if (job.redeliveries > maxRedeliveries) {
        const reason = `delivered ${job.redeliveries} times without an outcome (its node died each time)`;
        q.bury({ job, reason, diedAt: now }, this.deadMax);
        // No node will settle it: its FAILURE is stored and its waiting client told (docs/failure-modes.md).
        const ttl = resultTtlOf(job.options, this.resultTtl);
        this.state.results.set(poisonRecord(job, delivery.queue, reason, now), ttl, now);
        // It ended (as recoverEntries-n.lua records it): its unique key is free, its own id known while its result is kept.
        this.state.ended(job, job.options.ignoreResult === true ? undefined : now + ttl, now);
        if (job.replyTo !== undefined && job.options.ignoreResult !== true)
          this.state.results.announce(job.replyTo, job.id);
        // As recoverEntries-n.lua records it: a WorkerLostError naming why.
        if (job.workflow !== undefined)
          this.state.workflows.leave(job.workflow, poisonFailure(job, reason), now, flowHost(this.state, touched, now));
      } else {
        q.rd.push(job);
        touched.add(delivery.queue);
      }
    }
    this.state.waiters.changed(touched);
    return held.length;
  }

  // schedule

  async publishSchedule(entries: readonly ScheduleDefinition[]): Promise<PublishReply> {
    return this.state.schedules.publish(entries, Date.now());
  }

  async claimTicks(claims: readonly TickClaim[]): Promise<ClaimReply> {
    for (const claim of claims) for (const job of claim.jobs) checkQueueName('queue', job.queue, throwOptionError);
    return this.state.schedules.claim(claims, Date.now(), (jobs) => this.enqueueNow(jobs));
  }

  async listSchedule(): Promise<ScheduleState[]> {
    return this.state.schedules.list();
  }

  async scheduleNames(): Promise<string[]> {
    return this.state.schedules.list().map((s) => s.name);
  }

  async dropSchedule(names: readonly string[]): Promise<number> {
    return this.state.schedules.drop(names);
  }

  async dropUnusedSchedule(leader: LeaderLease): Promise<string[]> {
    const inUse = new Set((await this.listNodes()).flatMap((n) => n.schedule ?? []));
    // Checked after the await, with the drop: nothing runs in between.
    const holder = this.state.leadership.holder(Date.now());
    if (holder?.nodeId !== leader.nodeId || holder.token !== leader.token) return [];
    const unused = this.state.schedules
      .list()
      .map((s) => s.name)
      .filter((name) => !inUse.has(name));
    this.state.schedules.drop(unused);
    return unused;
  }
}
