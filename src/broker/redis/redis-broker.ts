import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { BrokerClosedError, messageOf } from '../../errors.js';
import type { EventBatch } from '../../events/event-batch.js';
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
  Delivery,
  DeadSetChange,
  EventPage,
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
  ResultReadOptions,
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
import { resolveBrokerOptions } from '../broker-options.js';
import { checkDeadChange, checkDeadLimit } from '../dead-set-checks.js';
import { checkPage } from '../job-page-checks.js';
import { checkQueueName, throwOptionError } from '../../job-option-checks.js';
import { checkPause } from '../paused-queues.js';
import { QueueAdmin } from './queue-admin.js';
import { BlockingConnection } from './blocking.js';
import { BlockingPool } from './blocking-pool.js';
import { maskUrl } from '../mask-url.js';
import { createConnection, open, quit } from './connection.js';
import { checkUrl } from '../broker-url.js';
import { Control } from './control.js';
import { encodeJob, uniqueTtlMs } from './entry-codec.js';
import { enqueueFailure } from './enqueue-outcome.js';
import { owesLateReplies } from './unanswered.js';
import { Keys } from './keys.js';
import { Membership } from './membership.js';
import { Pauses } from './pauses.js';
import { checkEvictionPolicy, nearMaxmemory, OutOfMemoryNotice } from './out-of-memory.js';
import { Results } from './results.js';
import { Revokes } from './revokes.js';
import { ScheduleStore } from './schedule.js';
import { packedBytes, packStrings } from './pack.js';
import { callScript, defineScripts } from './scripts.js';
import { namedRefusal, settleError, type TypedKey } from './reply-errors.js';
import { Events } from './events.js';
import { Deliveries } from './deliveries.js';
import { JobIndex } from './job-index.js';
import { RateLimits } from './rate-limits.js';
import { Workflows } from './workflows.js';
import { SilentConnectionGuard, silenceBound } from './silent-connection.js';
import type { CompiledWorkflow, WorkflowRecord } from '../types.js';

/** Most jobs per bulk-script call (keeps one call's time in Redis around a millisecond). */
const BULK_CHUNK = 1000;
/**
 * Most bytes of job values per bulk-script call: the packed jobs are one
 * argument, and Redis refuses an argument over its proto-max-bulk-len (512 MB
 * by default, 1 MB at the least). A larger job goes alone.
 */
const BULK_BYTES = 512 * 1024;
/** More than a job's field names add to its values packed (a workflow's job is packed with them), and the packing's outer header. */
const FIELD_NAMES_MAX = 128;
/**
 * The keys enqueueOnce-n.lua checks for a job, after its first three, and
 * the spec that names them: the ended-marker of a job with its own id, then
 * its unique lock.
 */
function uniqueKeys(keys: Keys, job: NewJob): { spec: string; keys: string[] } {
  const out = { spec: '', keys: [] as string[] };
  if (job.ownId === true) {
    out.spec += 'i';
    out.keys.push(keys.endedMark(job.id));
  }
  if (job.uniqueKey !== undefined) {
    out.spec += 'u';
    out.keys.push(keys.unique(job.uniqueKey));
  }
  return out;
}

/** A settlement that writes something new (a plain ack only deletes): Redis at maxmemory refuses it. */
function growsRedis(s: Settlement): boolean {
  return s.kind !== 'ack' || s.result !== undefined;
}

/** `rows` (of `sizes` bytes) cut in order into chunks of at most `count` rows and `bytes` bytes (a larger row alone). */
function* chunks<T>(rows: readonly T[], sizes: readonly number[], count: number, bytes: number): Generator<T[]> {
  let chunk: T[] = [];
  let size = 0;
  for (const [i, row] of rows.entries()) {
    const rowSize = sizes[i] as number;
    if (chunk.length > 0 && (chunk.length >= count || size + rowSize > bytes)) {
      yield chunk;
      chunk = [];
      size = 0;
    }
    chunk.push(row);
    size += rowSize;
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * The `redis://` broker: Redis Streams with one consumer group (GROUP), a lease
 * per node, delayed jobs in a ZSET per queue (docs/architecture.md).
 * Connections, each opened when first needed: commands and scripts; a
 * blocking one for waitForWork; blocking ones for waitForResults and for
 * the events (a BlockingPool: Clients sharing the broker read at once); a
 * blocking one for control replies.
 */
export class RedisBroker implements Broker {
  readonly displayUrl: string;
  readonly leaseMs: number;
  readonly revokeMax: number;
  readonly commandTimeoutMs: number | undefined;
  private readonly keys: Keys;
  private readonly log: Logger;
  private readonly results: Results;
  private readonly deliveries: Deliveries;
  private readonly membership: Membership;
  private readonly admin: QueueAdmin;
  private readonly pauses: Pauses;
  private readonly control: Control;
  private readonly revokes: Revokes;
  private readonly events: Events;
  private readonly jobIndex: JobIndex;
  private readonly rates: RateLimits;
  private readonly schedules: ScheduleStore;
  private readonly workflows: Workflows;
  private commands: Redis | undefined;
  /** Watches an unbounded command connection (a Worker's) for silence while Redis answers (SilentConnectionGuard). */
  private silenceGuard: SilentConnectionGuard | undefined;
  private connecting: Promise<Redis> | undefined;
  /** Connections being opened: close() ends them too, or they would open after it. */
  private readonly opening = new Set<Redis>();
  private closed = false;
  /** The first close()'s work, which every call of close() resolves with. */
  private closeCall: Promise<void> | undefined;
  private readonly workWaits: BlockingConnection;
  private readonly resultWaits: BlockingPool;
  /** Opened only by a process that waits for control replies (the CLI). */
  private readonly controlWaits: BlockingConnection;
  /** Opened only by a process that follows the events. */
  private readonly eventWaits: BlockingPool;
  /** Queues this process already added to `{ns}:queues`. */
  private readonly knownLocally = new Set<string>();
  private readonly outOfMemory: OutOfMemoryNotice;

  constructor(
    private readonly url: string,
    options: BrokerOptions = {},
  ) {
    this.displayUrl = maskUrl(url);
    checkUrl(url);
    const { namespace, resultTtl, leaseMs, deadMax, revokeTtl, revokeMax, eventsMaxLen, commandTimeoutMs } =
      resolveBrokerOptions(options);
    this.leaseMs = leaseMs;
    this.revokeMax = revokeMax;
    this.commandTimeoutMs = commandTimeoutMs;
    this.keys = new Keys(namespace);
    this.log = (options.logger ?? defaultLogger()).child({ component: 'redis-broker' });
    this.results = new Results(this.keys, resultTtl, this.log);
    this.events = new Events(this.keys, eventsMaxLen, this.log);
    this.workflows = new Workflows(this.keys, this.results);
    const workflows = this.workflows;
    this.results.others = {
      addRead: (pipe, id) => workflows.addOutcomeRead(pipe, id),
      read: (redis, id) => workflows.readOutcome(redis, id),
      decode: (id, reply) => workflows.outcomeFrom(id, reply),
    };
    this.deliveries = new Deliveries(this.keys, this.results, deadMax, this.events, this.workflows);
    this.membership = new Membership(this.keys, this.leaseMs, deadMax, this.log, this.workflows, this.results);
    this.admin = new QueueAdmin(this.keys);
    this.pauses = new Pauses(this.keys);
    this.control = new Control(this.keys, this.log);
    this.jobIndex = new JobIndex(this.keys, this.results);
    this.revokes = new Revokes(this.keys, this.membership, this.control, this.jobIndex, this.workflows, {
      resultTtl,
      revokeTtl,
      revokeMax,
      leaseMs,
    });
    this.rates = new RateLimits(this.keys);
    this.schedules = new ScheduleStore(this.keys);
    this.outOfMemory = new OutOfMemoryNotice(this.log, this.displayUrl);
    const unblocker = (): Redis =>
      this.commands ??
      (() => {
        throw new BrokerClosedError();
      })();
    this.workWaits = new BlockingConnection(url, this.displayUrl, 'prefork:work-wait', this.log, unblocker, () =>
      this.deliveries.markSuspect(),
    );
    // Pools: Clients sharing this broker object each wait at once (BlockingPool).
    this.resultWaits = new BlockingPool(
      () => new BlockingConnection(url, this.displayUrl, 'prefork:result-wait', this.log, unblocker),
    );
    this.controlWaits = new BlockingConnection(url, this.displayUrl, 'prefork:control-wait', this.log, unblocker);
    this.eventWaits = new BlockingPool(
      () => new BlockingConnection(url, this.displayUrl, 'prefork:event-wait', this.log, unblocker),
    );
  }

  /** Opens the command connection; rejects (never hangs: see open()) with BrokerUnavailableError or BrokerRefusedError. */
  async connect(): Promise<void> {
    await this.redis();
  }

  private redis(): Promise<Redis> {
    // Once open, the connection reconnects by itself; commands wait for it (briefly) or fail.
    if (this.commands !== undefined) return Promise.resolve(this.commands);
    this.connecting ??= (async () => {
      // Bounded only when asked: a producer's or a tool's broker (a Worker refuses a bounded one).
      const conn = createConnection(this.url, 'command', 'prefork:commands', this.log, this.commandTimeoutMs);
      defineScripts(conn);
      // A reply lost with the connection may have reserved entries: look for them on the next fetch.
      conn.on('close', () => this.deliveries.markSuspect());
      try {
        await this.openUnlessClosed(conn);
      } finally {
        this.connecting = undefined;
      }
      this.commands = conn;
      // Unbounded, its commands would wait for ever on a connection gone silent (a bounded one's time out).
      if (this.commandTimeoutMs === undefined)
        this.silenceGuard = new SilentConnectionGuard(conn, this.url, silenceBound(this.leaseMs), this.log);
      void checkEvictionPolicy(conn, this.log, this.displayUrl);
      await this.results.limit.read(conn, this.log);
      // Read again on each reconnect: Redis drops a connection that sends a value over a limit lowered
      // since (CONFIG SET), and the settlement it refused is then sent again, to be fitted under the new one.
      conn.on('ready', () => void this.results.limit.read(conn, this.log));
      return conn;
    })();
    return this.connecting;
  }

  /** open(), ended by close(): a connection that opens after close() is not kept. */
  private async openUnlessClosed(conn: Redis): Promise<void> {
    if (this.closed) throw new BrokerClosedError();
    this.opening.add(conn);
    try {
      await open(conn, this.displayUrl);
    } catch (err) {
      throw this.closed ? new BrokerClosedError() : err;
    } finally {
      this.opening.delete(conn);
    }
    if (this.closed) {
      conn.disconnect();
      throw new BrokerClosedError();
    }
  }

  /** Ends every connection; called again (before or after it ended), it resolves when the first call does. */
  close(): Promise<void> {
    // One close for all callers: a second call would find nothing left to end and resolve at once.
    this.closeCall ??= this.shutdown();
    return this.closeCall;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    for (const conn of this.opening) conn.disconnect();
    await Promise.all([
      this.workWaits.close(),
      this.resultWaits.close(),
      this.controlWaits.close(),
      this.eventWaits.close(),
      // On the command connection: sent before it quits.
      this.deliveries.announced(),
    ]);
    this.silenceGuard?.stop();
    const conn = this.commands;
    this.commands = undefined;
    if (conn === undefined) return;
    // A QUIT would queue behind the commands Redis left unanswered (owesLateReplies), and time out in turn.
    if (conn.status !== 'ready' || owesLateReplies(conn)) {
      conn.disconnect();
      return;
    }
    await quit(conn, this.displayUrl);
  }

  // producer

  /**
   * One pipeline. Ready jobs go to their stream through the bulk script,
   * consecutive jobs of one queue in one call (it also records each job's
   * place in the job index, which needs the entry id XADD gives). A delayed
   * job goes through a script (the server's clock decides when). A job
   * with a unique key or its own id goes alone through the script that
   * first looks for the job it would duplicate (enqueueOnce-n.lua). Each
   * workflow is one script (enqueueWorkflow-n.lua), after the jobs.
   */
  async enqueue(jobs: readonly NewJob[], workflows: readonly CompiledWorkflow[] = []): Promise<(string | undefined)[]> {
    if (jobs.length === 0 && workflows.length === 0) return [];
    for (const job of jobs) checkQueueName('queue', job.queue, throwOptionError);
    for (const workflow of workflows) for (const q of workflow.queues) checkQueueName('queue', q, throwOptionError);
    const redis = await this.redis();
    return this.outOfMemory.watch('jobs', true, () => this.enqueueOn(redis, jobs, workflows));
  }

  private async enqueueOn(
    redis: Redis,
    jobs: readonly NewJob[],
    workflows: readonly CompiledWorkflow[],
  ): Promise<(string | undefined)[]> {
    const pipe = redis.pipeline();
    const added: string[] = [];
    const known = (queue: string): void => {
      if (this.knownLocally.has(queue)) return;
      this.knownLocally.add(queue);
      added.push(queue);
      pipe.sadd(this.keys.queues, queue);
    };
    // Per job checked for duplicates: its place in `jobs` and its script's place in the pipeline.
    const checked: [number, number][] = [];
    // Per command that adds jobs (or a workflow), by its place in the pipeline: their ids.
    const adds = new Map<number, string[]>();
    // A run of ready jobs for one queue, in order, not yet in the pipeline.
    let runQueue = '';
    let run: (string | Buffer)[][] = [];
    let runIds: string[] = [];
    let runSizes: number[] = [];
    const flushRun = (): void => {
      if (run.length === 0) return;
      const stream = this.keys.stream(runQueue);
      let from = 0;
      for (const chunk of chunks(run, runSizes, BULK_CHUNK, BULK_BYTES)) {
        adds.set(pipe.length, runIds.slice(from, (from += chunk.length)));
        callScript(pipe, 'enqueueJobs', [stream, this.keys.jobs], [packStrings(chunk)]);
      }
      run = [];
      runIds = [];
      runSizes = [];
    };
    let replies: [Error | null, unknown][] | null;
    // A job refused before it is sent (over Redis's value limit), or a failed exec: no queue was listed.
    try {
      jobs.forEach((job, at) => {
        const fields = encodeJob(job);
        // The values only (odd places of the field list): a bulk call packs them, one argument per chunk.
        const values = fields.filter((_, i) => i % 2 === 1);
        const size = packedBytes(values);
        // Its largest argument, whichever way it goes (alone in a chunk, or each field its own argument).
        this.results.limit.checkJob(job.task, size + FIELD_NAMES_MAX);
        known(job.queue);
        const due: [string, number] | undefined =
          job.eta !== undefined
            ? ['eta', Math.round(job.eta)]
            : job.delay !== undefined && job.delay > 0
              ? ['delay', Math.round(job.delay)]
              : undefined;
        if (job.uniqueKey !== undefined || job.ownId === true) {
          flushRun();
          checked.push([at, pipe.length]);
          adds.set(pipe.length, [job.id]);
          const once = uniqueKeys(this.keys, job);
          callScript(
            pipe,
            'enqueueOnce',
            [this.keys.stream(job.queue), this.keys.delayed(job.queue), this.keys.jobs, ...once.keys],
            [once.spec, uniqueTtlMs(job), ...(due ?? ['now', 0]), ...fields],
          );
          return;
        }
        if (due === undefined) {
          if (job.queue !== runQueue) flushRun();
          runQueue = job.queue;
          run.push(values);
          runIds.push(job.id);
          runSizes.push(size);
          return;
        }
        flushRun();
        adds.set(pipe.length, [job.id]);
        callScript(
          pipe,
          'enqueueDelayed',
          [this.keys.delayed(job.queue), this.keys.stream(job.queue), this.keys.jobs],
          [...due, ...fields],
        );
      });
      flushRun();
      for (const workflow of workflows) {
        for (const q of workflow.queues) known(q);
        adds.set(pipe.length, [workflow.id]);
        this.workflows.addEnqueue(pipe, workflow);
      }
      replies = await pipe.exec();
    } catch (err) {
      for (const q of added) this.knownLocally.delete(q);
      throw err;
    }
    this.refusedPart(replies ?? [], adds, added);
    const out: (string | undefined)[] = jobs.map(() => undefined);
    for (const [at, reply] of checked) {
      const [existing] = (replies?.[reply]?.[1] ?? []) as [Buffer | string | undefined];
      const id = existing === undefined ? '' : existing.toString();
      if (id !== '') out[at] = id;
    }
    return out;
  }

  /**
   * Throws when a command of an enqueue's pipeline failed (enqueueFailure):
   * when some jobs landed, the error says which (EnqueueIncompleteError), so
   * a caller does not enqueue them twice. Only the queue's listing failed
   * (every job landed): logged, not thrown.
   */
  private refusedPart(replies: [Error | null, unknown][], adds: ReadonlyMap<number, string[]>, added: string[]): void {
    const failure = enqueueFailure(replies, adds);
    if (failure === undefined) return;
    for (const q of added) this.knownLocally.delete(q);
    if (failure.kind === 'failed') throw failure.err;
    this.log.warn(
      { err: messageOf(failure.err), queues: added },
      'jobs enqueued, but their queue names were not listed',
    );
  }

  // results

  getWorkflow(id: string): Promise<WorkflowRecord | undefined> {
    return this.adminCall(`the read of workflow ${id}`, [[this.keys.workflow(id), 'hash']], (redis) =>
      this.workflows.read(redis, id),
    );
  }

  async getResult(id: string): Promise<ResultRecord | undefined> {
    return this.results.get(await this.redis(), id);
  }

  async isFull(): Promise<boolean> {
    return nearMaxmemory(await (await this.redis()).info('memory'));
  }

  async getResults(ids: readonly string[], options: ResultReadOptions = {}): Promise<(ResultRecord | undefined)[]> {
    return this.results.read(await this.redis(), ids, options.jobsOnly === true);
  }

  async waitForResults(clientId: string, timeoutMs: number, signal?: AbortSignal): Promise<AnnouncedResults> {
    const redis = await this.redis();
    return this.results.waitFor(redis, this.resultWaits, clientId, timeoutMs, signal);
  }

  // jobs

  async locate(id: string): Promise<JobLocation | undefined> {
    return this.jobIndex.locate(await this.redis(), id);
  }

  async removeWaiting(id: string): Promise<JobLocation | undefined> {
    const redis = await this.redis();
    // A workflow this ended has its client told in the same script.
    const taken = await this.jobIndex.removeWaiting(redis, id);
    return taken?.location;
  }

  // consumer

  async fetch(request: FetchRequest): Promise<FetchReply> {
    const redis = await this.redis();
    try {
      return await this.outOfMemory.watch('outcomes', request.settle.some(growsRedis), () =>
        this.deliveries.fetch(redis, request),
      );
    } catch (err) {
      throw await this.refusal(redis, 'the fetch', err, [
        ...request.plan.map((p) => p.queue),
        ...request.settle.map((s) => s.delivery.queue),
      ]);
    }
  }

  async waitForWork(
    nodeId: string,
    queues: readonly string[],
    timeoutMs: number,
    signal: AbortSignal,
    count = 1,
    leaseHeld?: () => boolean,
  ): Promise<WaitReply> {
    if (queues.length === 0 || signal.aborted) return { deliveries: [], nextDueAt: undefined };
    const redis = await this.redis();
    try {
      return await this.deliveries.waitForWork(
        redis,
        this.workWaits,
        nodeId,
        queues,
        timeoutMs,
        signal,
        count,
        leaseHeld,
      );
    } catch (err) {
      throw await this.refusal(redis, 'the wait for work', err, queues);
    }
  }

  forget(deliveries: readonly Delivery[]): void {
    this.deliveries.forget(deliveries);
  }

  async settle(settlements: readonly Settlement[]): Promise<void> {
    const redis = await this.redis();
    await this.outOfMemory.watch('outcomes', settlements.some(growsRedis), () =>
      this.deliveries.settle(redis, settlements).catch((err: unknown) => {
        throw settleError(err);
      }),
    );
  }

  // membership

  async register(node: NodeInfo, adoptFrom?: string): Promise<number> {
    for (const q of node.queues) this.knownLocally.add(q);
    return this.membership.register(await this.redis(), node, adoptFrom);
  }

  async updateNode(nodeId: string, update: NodeUpdate): Promise<boolean> {
    return this.membership.update(await this.redis(), nodeId, update);
  }

  async heartbeat(nodeId: string, queues: readonly string[], lead?: boolean): Promise<HeartbeatReply> {
    const redis = await this.redis();
    try {
      return await this.membership.heartbeat(redis, nodeId, queues, lead);
    } catch (err) {
      throw await this.refusal(redis, 'the heartbeat', err, queues);
    }
  }

  /**
   * A failure of the node's fetch, wait or heartbeat, as the Broker contract
   * has it (reply-errors.ts): a refusal is a BrokerRefusedError that, for
   * WRONGTYPE, names the keys of `queues` (and the node keys) that hold
   * another type than prefork's.
   */
  private refusal(redis: Redis, what: string, err: unknown, queues: readonly string[]): Promise<unknown> {
    return namedRefusal(redis, what, err, this.keys.typedKeys([...new Set(queues)]));
  }

  /**
   * An admin call (`what`: "the read of the known queues"): a refusal is a
   * BrokerRefusedError that, for WRONGTYPE, names the keys of `typed` that
   * hold another type (a bare WRONGTYPE left the operator to guess which).
   */
  private async adminCall<T>(what: string, typed: readonly TypedKey[], call: (redis: Redis) => Promise<T>): Promise<T> {
    const redis = await this.redis();
    try {
      return await call(redis);
    } catch (err) {
      throw await namedRefusal(redis, what, err, typed);
    }
  }

  async leader(): Promise<LeaderLease | undefined> {
    return this.membership.leader(await this.redis());
  }

  async recover(deadNodeId: string, byNodeId: string, maxRedeliveries: number): Promise<number> {
    return this.membership.recover(await this.redis(), deadNodeId, byNodeId, maxRedeliveries);
  }

  async unregister(nodeId: string): Promise<void> {
    await this.membership.unregister(await this.redis(), nodeId);
  }

  listNodes(): Promise<NodeInfo[]> {
    return this.adminCall('the read of the nodes', [[this.keys.nodes, 'zset']], (redis) =>
      this.membership.listNodes(redis),
    );
  }

  // control

  async sendControl(nodeIds: readonly string[], request: ControlRequest, ttlMs: number): Promise<string[]> {
    return this.control.send(await this.redis(), nodeIds, request, ttlMs);
  }

  async watchControl(wake: (nodeId: string) => void): Promise<() => Promise<void>> {
    const conn = createConnection(this.url, 'command', 'prefork:control-watch', this.log);
    try {
      await this.openUnlessClosed(conn);
      return await this.control.watch(conn, wake, this.displayUrl);
    } catch (err) {
      conn.disconnect();
      throw err;
    }
  }

  async takeControl(nodeId: string): Promise<ControlRequest[]> {
    return this.control.take(await this.redis(), nodeId);
  }

  async replyControl(requestId: string, reply: ControlReply): Promise<void> {
    await this.control.reply(await this.redis(), requestId, reply);
  }

  async waitForControlReplies(requestId: string, count: number, timeoutMs: number): Promise<ControlReply[]> {
    await this.redis();
    return this.control.waitForReplies(this.controlWaits, requestId, count, timeoutMs);
  }

  // revokes

  async revoke(ids: readonly string[], options: RevokeOptions): Promise<RevokeOutcome[]> {
    const redis = await this.redis();
    return this.outOfMemory.watch('revokes', true, () => this.revokes.revoke(redis, ids, options));
  }

  listRevoked(since?: number): Promise<RevokedJob[]> {
    return this.adminCall('the read of the revoked ids', [[this.keys.revoked, 'zset']], (redis) =>
      this.revokes.list(redis, since),
    );
  }

  // events

  carryEvents(carrier: EventCarrier): void {
    this.events.carry(carrier);
  }

  async publishEvents(batch: EventBatch): Promise<void> {
    await this.events.publish(await this.redis(), batch);
  }

  async recentEvents(count: number): Promise<EventPage> {
    return this.events.recent(await this.redis(), count);
  }

  async readEvents(position: string, timeoutMs: number, signal?: AbortSignal): Promise<EventPage> {
    return this.events.read(await this.redis(), this.eventWaits, position, timeoutMs, signal);
  }

  // pauses

  async pauseQueue(queue: string, node?: string): Promise<boolean> {
    checkPause(queue, node);
    return this.adminCall(`the pause of queue ${queue}`, this.pauseKeys(), (redis) =>
      this.pauses.pause(redis, queue, node),
    );
  }

  async resumeQueue(queue: string, node?: string): Promise<number> {
    checkPause(queue, node);
    return this.adminCall(`the resume of queue ${queue}`, this.pauseKeys(), (redis) =>
      this.pauses.resume(redis, queue, node),
    );
  }

  listPaused(): Promise<PausedQueue[]> {
    return this.adminCall('the read of the paused queues', this.pauseKeys(), (redis) => this.pauses.list(redis));
  }

  private pauseKeys(): TypedKey[] {
    return [
      [this.keys.paused, 'set'],
      [this.keys.nodes, 'zset'],
    ];
  }

  // admin

  knownQueues(): Promise<string[]> {
    return this.adminCall('the read of the known queues', [[this.keys.queues, 'set']], (redis) =>
      this.admin.knownQueues(redis),
    );
  }

  counts(queues: readonly string[]): Promise<QueueCounts[]> {
    const typed = [...new Set(queues)].flatMap((q) => this.keys.queueTypes(q));
    return this.adminCall("the count of the queues' jobs", typed, (redis) => this.admin.counts(redis, queues));
  }

  purge(queue: string): Promise<number> {
    return this.adminCall(`the purge of queue ${queue}`, this.keys.typedKeys([queue]), async (redis) => {
      const { dropped, ended } = await this.admin.purge(redis, queue);
      if (ended.length > 0) await this.workflows.announce(redis, ended);
      return dropped;
    });
  }

  async listDead(queue: string, limit: number): Promise<DeadJob[]> {
    checkDeadLimit(limit);
    return this.adminCall(`the read of queue ${queue}'s dead set`, [[this.keys.dead(queue), 'stream']], (redis) =>
      this.admin.listDead(redis, queue, limit),
    );
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
    const typed: TypedKey[] = [
      [this.keys.dead(queue), 'stream'],
      [this.keys.stream(queue), 'stream'],
      [this.keys.jobs, 'hash'],
    ];
    return this.adminCall(`the ${action} of queue ${queue}'s dead jobs`, typed, (redis) =>
      this.admin.changeDead(redis, queue, action, ids),
    );
  }

  async listJobs(queue: string, state: ListedState, limit: number, cursor?: string): Promise<JobPage> {
    checkPage(state, limit);
    return this.adminCall(`the listing of queue ${queue}'s ${state} jobs`, this.keys.queueTypes(queue), (redis) =>
      this.admin.listJobs(redis, queue, state, limit, cursor),
    );
  }

  // rate limits

  async acquireSlots(requests: readonly SlotRequest[]): Promise<SlotGrant[]> {
    return this.rates.acquire(await this.redis(), requests);
  }

  rateLimits(): Promise<Map<string, string>> {
    return this.adminCall('the read of the rate limits', [[this.keys.rateLimits, 'hash']], (redis) =>
      this.rates.list(redis),
    );
  }

  setRateLimit(task: string, rate: string): Promise<number> {
    const typed: TypedKey[] = [
      [this.keys.rateLimits, 'hash'],
      [this.keys.rateBucket(task), 'string'],
      [this.keys.queues, 'set'],
      [this.keys.jobs, 'hash'],
      [this.keys.nodes, 'zset'],
    ];
    return this.adminCall(`the rate limit of task ${task}`, typed, (redis) => this.rates.set(redis, task, rate));
  }

  // schedule

  async publishSchedule(entries: readonly ScheduleDefinition[]): Promise<PublishReply> {
    return this.schedules.publish(await this.redis(), entries);
  }

  async claimTicks(claims: readonly TickClaim[]): Promise<ClaimReply> {
    for (const claim of claims) for (const job of claim.jobs) checkQueueName('queue', job.queue, throwOptionError);
    const redis = await this.redis();
    return this.outOfMemory.watch('jobs', true, () => this.schedules.claim(redis, claims));
  }

  listSchedule(): Promise<ScheduleState[]> {
    return this.adminCall('the read of the schedule', [[this.keys.schedules, 'set']], (redis) =>
      this.schedules.list(redis),
    );
  }

  async scheduleNames(): Promise<string[]> {
    return (await this.redis()).smembers(this.keys.schedules);
  }

  async dropUnusedSchedule(leader: LeaderLease): Promise<string[]> {
    return this.schedules.dropUnused(await this.redis(), leader);
  }

  async dropSchedule(names: readonly string[]): Promise<number> {
    return this.schedules.drop(await this.redis(), names);
  }
}
