import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { createBroker } from './broker/index.js';
import type { BrokerAdmin, NodeInfo, QueueCounts, RevokedJob, RevokeOptions } from './broker/types.js';
import { ControlHandler } from './cluster/control.js';
import { jobView } from './cluster/job-view.js';
import { Heartbeat, heartbeatInterval } from './cluster/heartbeat.js';
import { Revocations } from './cluster/revocations.js';
import { NodePauses, type PauseScope } from './cluster/pauses.js';
import { SettingsResync } from './cluster/settings-resync.js';
import { Leadership } from './cluster/leadership.js';
import type { SettleBatchCounts } from './consumer/acker.js';
import { Consumer, type ConsumerCounts } from './consumer/consumer.js';
import { AdaptivePrefetch, FixedPrefetch } from './consumer/prefetch.js';
import { QueueSelection } from './consumer/queue-selection.js';
import { RateGate } from './consumer/rate-gate.js';
import { retryDelay, type BackoffPolicy } from './util/backoff.js';
import { abortableSleep } from './util/sleep.js';
import { within } from './util/within.js';
import { EventBuffer } from './events/event-buffer.js';
import { JobEvents } from './events/job-events.js';
import {
  BrokerRefusedError,
  ConsumerFailedError,
  InvalidStateError,
  RevokedError,
  WorkerStoppedError,
  messageOf,
  type PoolFailedError,
} from './errors.js';
import { checkKnownKeys, throwOptionError } from './job-option-checks.js';
import { defaultLogger } from './logger.js';
import { optionalDuration } from './pool/options.js';
import { NodeEndpoints, type EndpointUrls } from './observe/node-endpoints.js';
import { liveness, readiness, type HealthInputs, type HealthReport } from './observe/node-health.js';
import { Pool, type CancelledJobs } from './pool/pool.js';
import { dropUnusedEntries } from './schedule/housekeeping.js';
import { Scheduler } from './schedule/scheduler.js';
import type { PoolStats } from './pool/stats.js';
import {
  resolveWorkerOptions,
  type ResolvedWorkerOptions,
  type WorkerBroker,
  type WorkerOptions,
} from './worker-options.js';

/** Pauses while the broker is unreachable at start: 0.5 s doubling to 10 s. */
const CONNECT_RETRY: BackoffPolicy = { delay: 500, cap: 10_000 };
/** What stop() accepts. */
const STOP_KEYS = new Set(['cold', 'deadline']);
/** How long a stop waits for the broker to confirm the last settlements (stop({ deadline })). */
export const STOP_DEADLINE_MS = 30_000;
/** Job ids listed in the log line of settlements dropped at the stop deadline. */
const DROPPED_IDS_LOGGED = 50;
/** A scrape waits this long for the broker's queue counts, then shows none (a scrape must not hang on a frozen Redis). */
const QUEUE_COUNTS_TIMEOUT_MS = 2_000;
/** A stop waits this long for its last events to be written (Redis may be away). */
const EVENTS_FLUSH_MS = 1_000;
/**
 * A stop waits this long to leave the cluster (the heartbeat and leadership
 * ended, the node unregistered) once its settlements are through: a Redis
 * that stopped answering would hold it for ever, and the node's lease
 * expiring does the same as leaving, only later.
 */
const LEAVE_MS = 5_000;

/** What `Worker.stop(options)` accepts. */
export interface StopOptions {
  /**
   * Kill the children instead of letting the jobs in flight finish; their
   * jobs go back to their queues (and run again: at least once).
   * @defaultValue false (a warm stop)
   */
  cold?: boolean;
  /**
   * Once the children are done, how long to wait for the broker to confirm
   * the outstanding settlements (ms or "30s"). Past it they are logged and
   * dropped: their jobs come back when the node's lease expires.
   * At most 2^31-1 ms (it runs as a timer).
   * @defaultValue 30 s
   */
  deadline?: number | string;
}

/** A snapshot of a node: `Worker.stats()`, and what `prefork inspect stats` shows. */
export interface WorkerStats {
  /** The node's name (the `name` option). */
  node: string;
  /** The id the node is registered under now. */
  nodeId: string;
  /** The queues it consumes. */
  queues: string[];
  /** Those of its queues paused on this node now (`prefork control pause`): it does not fetch from them. */
  paused: string[];
  /** Quiet (SIGTSTP): it fetches from no queue any more; the jobs it holds run on. */
  quiet: boolean;
  /** The Consumer's counters over the node's life. */
  consumer: ConsumerCounts;
  /** Settlements produced but not yet confirmed by the broker. */
  unacked: number;
  /** How many batches of settlements left, by why they left. */
  settleBatches: SettleBatchCounts;
  /** The pool's snapshot (`Pool.stats()`). */
  pool: PoolStats;
  /** Revoked job ids the node remembers (a job fetched with one is skipped). */
  revoked: number;
}

/** Why a worker stopped by itself: its pool failed, or its Consumer's fetch loop crashed. */
export type WorkerFailure = PoolFailedError | ConsumerFailedError;

/** The Worker's events and their arguments: `worker.on('failed', (err) => ...)`. */
export interface WorkerEvents {
  /** start() is done: the node is registered, its children are up and it consumes. */
  ready: [
    {
      /** The id the node registered under. */
      nodeId: string;
    },
  ];
  /** stop() is done: the children have exited and the node left the cluster. */
  stopped: [];
  /**
   * The pool failed (children kept dying before they could work) or the
   * Consumer crashed (nothing would fetch any more): the worker stopped by
   * itself, gave every job it held back to the broker and left the cluster.
   * Emitted once that is done ('stopped' comes first); also when the failure
   * comes during a stop already under way (`failed` is set before 'stopped'
   * either way).
   */
  failed: [WorkerFailure];
}

/**
 * The lifecycle of a Worker.
 * - created → connecting (start) → running → stopping (stop) → stopped.
 */
type WorkerState = 'created' | 'connecting' | 'running' | 'stopping' | 'stopped';

/**
 * A worker node: Consumer + Pool + Autoscaler (inside the pool) + the
 * cluster duties (lease, recovery of dead nodes). Many nodes share one broker.
 */
export class Worker extends EventEmitter<WorkerEvents> {
  /** The options as validated, with defaults applied (pool options as given to the Pool). */
  readonly options: ResolvedWorkerOptions;
  /** The node's pool of children. */
  readonly pool: Pool;
  /** The broker it consumes from: the one given, or the one it opened for a URL (and closes on stop). */
  readonly broker: WorkerBroker;
  /** The node's name (the `name` option). */
  readonly name: string;
  private nodeIdValue: string;
  private readonly log: Logger;
  private readonly ownsBroker: boolean;
  private readonly consumer: Consumer;
  private readonly rates: RateGate;
  private readonly heartbeat: Heartbeat;
  private readonly control: ControlHandler;
  /** Revoked job ids: a job fetched with one is skipped. */
  private readonly revocations: Revocations;
  /** Queues it does not fetch from now (paused, or quiet). */
  private readonly pauses: NodePauses;
  private readonly resync: SettingsResync;
  private readonly selection: QueueSelection;
  /** Runs the `schedule` option's entries (undefined: no schedule, no cost). */
  private readonly scheduler: Scheduler | undefined;
  /** Whether this node leads, and its singleton duties (a node with a schedule stands for leader). */
  private readonly leadership: Leadership;
  /** Stops the control wake-up subscription (undefined: not watching). */
  private unwatchControl: (() => Promise<void>) | undefined;
  private state: WorkerState = 'created';
  private stopping: Promise<void> | undefined;
  private cold = false;
  private fencing: Promise<void> | undefined;
  /**
   * Old ids this node kept its jobs under (its registration vanished) whose
   * reservations its current id has not taken over yet: the call failed.
   * Tried again after each heartbeat; until then nothing covers those jobs,
   * and the orphan sweep would hand them out again after about two leases.
   */
  private readonly unadopted = new Set<string>();
  private adopting: Promise<void> | undefined;
  private registered = false;
  /** The node's registration while start() makes it: a stop waits for it, so it leaves what it joined. */
  private joining: Promise<void> | undefined;
  /** The endpoints while start() opens them: a stop waits for them, so none is left listening. */
  private opening: Promise<void> | undefined;
  /** start() failed by itself (not stopped): another start() is a call twice, not one after stop(). */
  private startFailed = false;
  private failure: WorkerFailure | undefined;
  private readonly abortConnect = new AbortController();
  private endpointsOpen: NodeEndpoints | undefined;
  /** Undefined: events are off. */
  private readonly events: EventBuffer | undefined;

  /** Validates the options (OptionError names a bad one); nothing connects or spawns before start(). */
  constructor(options: WorkerOptions) {
    super();
    this.options = resolveWorkerOptions(options);
    const o = this.options;
    this.name = o.name;
    this.nodeIdValue = newNodeId(o.name);
    this.log = (o.logger ?? defaultLogger()).child({ node: o.name });
    this.pool = new Pool({ ...o.pool, logger: this.log });
    this.ownsBroker = typeof o.broker === 'string';
    this.broker =
      typeof o.broker === 'string'
        ? createBroker(o.broker, {
            namespace: o.namespace,
            resultTtl: o.resultTtl,
            leaseMs: o.leaseMs,
            logger: this.log,
          })
        : o.broker;
    this.revocations = new Revocations(this.broker.revokeMax);
    const processes = this.pool.options.autoscale?.max ?? this.pool.options.processes;
    this.pauses = new NodePauses(o.name, () => this.consumer.queuesChanged());
    this.selection = new QueueSelection(o.queues, o.queueOrder);
    this.selection.skip = (queue) => this.pauses.has(queue);
    this.rates = new RateGate(
      this.broker,
      (task) => this.pool.taskOptions(task),
      this.log.child({ component: 'rate-limits' }),
    );
    this.resync = new SettingsResync(
      this.broker,
      ({ pauses, rates }) => {
        // Jobs waiting their turn may have been spaced again: fetch rather than sleep on the old due time.
        if (this.rates.apply(rates)) this.consumer.noteDue(Date.now());
        this.pauses.load(pauses);
      },
      (revoked) => this.revokedUntold(revoked),
      this.log.child({ component: 'control' }),
    );
    this.consumer = new Consumer({
      broker: this.broker,
      pool: this.pool,
      rates: this.rates,
      selection: this.selection,
      nodeId: () => this.nodeIdValue,
      leaseHeld: () => this.heartbeat.leaseHeld(),
      nodeName: o.name,
      // With autoscale the prefetch limit follows max (Celery's _update_consumer_prefetch_count), so a burst can grow the pool.
      prefetch:
        o.prefetchMultiplier === undefined
          ? new AdaptivePrefetch(processes, { quickAllowance: this.pool.options.strategy === 'fair' })
          : new FixedPrefetch(o.prefetchMultiplier, processes),
      trackStarted: o.trackStarted,
      revoked: (id) => this.revocations.has(id),
      jobLogLevel: o.jobLogLevel,
      // A broker call outstanding a lease past its own wait: the node has lost its lease by then, so the loop is stuck.
      stallAfterMs: this.broker.leaseMs,
      log: this.log.child({ component: 'consumer' }),
    });
    this.consumer.onFenced((seenAs) => this.fenced(seenAs));
    this.consumer.onCrash((err) => this.failWith(new ConsumerFailedError(err)));
    this.control = new ControlHandler(
      this.broker,
      {
        name: o.name,
        nodeId: () => this.nodeIdValue,
        stats: () => this.stats(),
        grow: (n) => ({ added: this.pool.grow(n), ...this.sizing() }),
        shrink: (n) => ({ retired: this.pool.shrink(n), ...this.sizing() }),
        autoscale: (max, min) => (this.pool.setAutoscale(max, min), this.sizing()),
        jobs: (which) => this.pool.jobs()[which].map(jobView),
        registered: () => this.pool.taskNames.map((name) => ({ name, options: this.pool.taskOptions(name) ?? {} })),
        rateLimit: (task, rate) => {
          this.resync.changed();
          const followed = this.rates.follow(task, rate);
          // The jobs waiting their turn were spaced again, maybe due now: fetch rather than sleep on the old due time.
          this.consumer.noteDue(Date.now());
          return followed;
        },
        shutdown: () => void this.stop(),
        revoke: (ids, options, expiresAt) => this.revoke(ids, options, expiresAt),
        pause: (queue, scope) => this.pauseQueue(queue, scope, true),
        resume: (queue, scope) => this.pauseQueue(queue, scope, false),
        // Only a node that stands for leader (it has a schedule) beats to take a released lease.
        leaderReleased: () => {
          if (this.scheduler !== undefined && this.state === 'running') this.heartbeat.beatSoon();
        },
      },
      this.log.child({ component: 'control' }),
    );
    this.scheduler =
      o.schedule === undefined
        ? undefined
        : new Scheduler(this.broker, o.schedule, this.log.child({ component: 'schedule' }));
    this.leadership = new Leadership(
      () => this.nodeIdValue,
      async (lease) => void (await dropUnusedEntries(this.broker, lease, this.log)),
      this.log.child({ component: 'leader' }),
    );
    // The id the current beat was sent under (beats are sequential), so a fencing it reports names the id it saw.
    let beatAs = this.nodeIdValue;
    this.heartbeat = new Heartbeat(
      this.broker,
      heartbeatInterval(this.broker.leaseMs),
      o.maxRedeliveries,
      {
        nodeId: () => (beatAs = this.nodeIdValue),
        // The due times of paused queues wake nobody: their delayed jobs wait for the resume.
        queues: () => this.selection.names,
        onFenced: () => this.fenced(beatAs),
        onDue: (at) => this.consumer.noteDue(at),
        onControl: (requests) => this.control.handle(requests),
        onRenewed: () => this.pool.resumeDispatch(),
        onBeat: (missed) => {
          if (this.unadopted.size > 0 && this.fencing === undefined) void this.adoptKept();
          // A pause or rate request may have lapsed before this node took it: the broker holds the setting.
          void this.resync.beat(missed);
        },
        onRoundTrip: (ms) => this.endpointsOpen?.metrics?.brokerRoundTrip(ms),
        // Only a node with a schedule stands for leader: the others' beats cost what they did.
        lead: () => this.scheduler !== undefined,
        onLeader: (lease) => this.leadership.update(lease),
      },
      this.log.child({ component: 'heartbeat' }),
    );
    // After a stall longer than the lease (SIGSTOP, an overloaded host) another node may own the jobs held here: none starts until the lease is confirmed.
    this.pool.setDispatchGate(() => this.heartbeat.leaseHeld());
    this.pool.on('failed', (err) => this.poolFailed(err));
    this.pool.on('resize', () => this.resized());
    if (o.events) this.events = this.emitEvents();
  }

  /** Job, pool and node events into the broker's stream, riding on its writes. */
  private emitEvents(): EventBuffer {
    const events = new EventBuffer(
      this.name,
      (batch) => this.broker.publishEvents(batch),
      this.log.child({ component: 'events' }),
    );
    this.broker.carryEvents(events);
    this.consumer.observe(new JobEvents(this.name, events));
    const node = this.name;
    this.pool.on('process-up', (e) => events.push({ type: 'process-up', at: Date.now(), node, pid: e.pid }));
    this.pool.on('process-down', (e) =>
      events.push({
        type: 'process-down',
        at: Date.now(),
        node,
        pid: e.pid,
        exitCode: e.exitCode,
        signal: e.signal,
        reason: e.reason,
      }),
    );
    this.pool.on('autoscale', (e) =>
      events.push({
        type: e.direction === 'up' ? 'scale-up' : 'scale-down',
        at: Date.now(),
        node,
        from: e.from,
        to: e.to,
      }),
    );
    this.pool.on('failed', (err) =>
      events.push({ type: 'pool-failed', at: Date.now(), node, error: { name: err.name, message: err.message } }),
    );
    return events;
  }

  private nodeEvent(type: 'node-online' | 'node-offline' | 'node-fenced'): void {
    this.events?.push({ type, at: Date.now(), node: this.name });
  }

  /** Set when the pool failed or the Consumer crashed; the worker then stops by itself. */
  get failed(): WorkerFailure | undefined {
    return this.failure;
  }

  /** The id this node is registered under in the broker (changes if the node is fenced and re-registers). */
  get nodeId(): string {
    return this.nodeIdValue;
  }

  /**
   * Connects (retrying while the broker is unreachable: one warning naming
   * why, then debug lines), registers the node, starts the pool and begins
   * consuming. Rejects with BrokerRefusedError when the broker refuses the
   * connection itself (a wrong or missing password, a database Redis does
   * not have: retrying would not help), with PoolFailedError when the
   * children cannot start (e.g. the task module does not load; the node then
   * leaves the cluster), and with InvalidStateError when called twice. Either
   * failure stops what had started. A stop() before it or while it runs
   * ends it: start() then rejects with WorkerStoppedError once what it had
   * started is stopped (the worker never ran; 'ready' is not emitted).
   */
  async start(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') {
      if (!this.startFailed)
        throw new WorkerStoppedError('start() called after stop(): the worker was stopped before it started');
    }
    if (this.state !== 'created') throw new InvalidStateError(`start() called on a worker that is ${this.state}`);
    try {
      await this.run();
    } catch (err) {
      if (!(err instanceof WorkerStoppedError)) this.startFailed = true;
      throw err;
    }
  }

  /** start() once it may: the steps, each checking that no stop() came meanwhile. */
  private async run(): Promise<void> {
    this.state = 'connecting';
    // First: a port in use fails the start before anything spawns or connects (and probes see "starting" at once).
    this.opening = this.openEndpoints();
    try {
      await this.opening;
    } catch (err) {
      if (this.state !== 'connecting') return this.stoppedDuringStart();
      this.state = 'stopped';
      this.stopping = Promise.resolve();
      if (this.ownsBroker) await this.broker.close();
      throw err;
    }
    if (this.state !== 'connecting') return this.stoppedDuringStart();
    // The children boot (Node, the task module) while the broker connects and the node registers:
    // the slowest steps of a start overlap. A pool that fails ends the connect loop.
    const poolStarted = this.pool.start();
    poolStarted.catch(() => this.abortConnect.abort());
    try {
      await this.connect();
    } catch (err) {
      await this.stop({ cold: true });
      throw err;
    }
    if (this.state !== 'connecting') return this.stoppedDuringStart();
    if (this.failure === undefined) {
      // A stop meanwhile waits for this before it leaves the cluster: it must not miss the registration.
      this.joining = this.join();
      try {
        await this.joining;
      } catch (err) {
        if (this.state !== 'connecting') return this.stoppedDuringStart();
        await this.stop({ cold: true });
        throw err;
      }
      if (this.state !== 'connecting') return this.stoppedDuringStart();
    }
    // Control requests at once; without the subscription they still come with the heartbeat.
    const watching = this.registered
      ? this.control.watch().catch((err: unknown) => {
          this.log.warn({ err }, 'control requests will come with the heartbeat only');
          return undefined;
        })
      : Promise.resolve(undefined);
    try {
      await poolStarted;
    } catch (err) {
      // E.g. the task module does not load (PoolFailedError): leave the cluster, then report.
      await (
        await watching
      )?.();
      // The pool was closed by a stop() meanwhile (PoolClosedError): the start was stopped, nothing failed.
      if (this.state !== 'connecting' && this.failure === undefined) return this.stoppedDuringStart();
      await this.stop({ cold: true });
      throw err;
    }
    this.unwatchControl = await watching;
    if (this.state !== 'connecting') {
      await this.unwatchControl?.();
      return this.stoppedDuringStart();
    }
    // The pool failed after it started but before the node runs: report it as start() does for a failure at start.
    if (this.failure !== undefined) {
      await this.stop({ cold: true });
      throw this.failure;
    }
    this.state = 'running';
    this.consumer.start();
    if (this.scheduler !== undefined) {
      this.scheduler.warnUnknownTasks(
        this.pool.taskNames,
        this.options.queues.map((q) => q.name),
      );
      this.scheduler.start();
      // Stand for leader now rather than one heartbeat interval after start.
      this.heartbeat.beatSoon();
    }
    this.log.info(
      { nodeId: this.nodeIdValue, queues: this.options.queues.map((q) => q.name), tasks: this.pool.taskNames },
      'worker ready',
    );
    this.emit('ready', { nodeId: this.nodeIdValue });
  }

  /** Registers the node and reads what it must honour from the start; the lease runs from here. */
  private async join(): Promise<void> {
    const sentAt = performance.now();
    await this.broker.register(this.nodeInfo());
    this.leaseRenewed(sentAt);
    this.registered = true;
    // After registering: a revoke, pause or rate limit from now on is sent to this node, one before is in the lists.
    await Promise.all([this.loadRevoked(), this.loadPauses(), this.loadRateLimits(), this.warnOfNamesakes()]);
    this.nodeEvent('node-online');
    // The lease runs from registration: beat while the pool starts (loading the task module can take longer than a lease).
    this.heartbeat.start();
  }

  /** start() found that a stop() came while it ran: it waits for that stop, then says the worker never ran. */
  private async stoppedDuringStart(): Promise<never> {
    await this.stopping?.catch(() => undefined);
    throw new WorkerStoppedError('the worker was stopped while it started: start() did not finish');
  }

  /**
   * Warm (default): stop fetching, give buffered-but-unstarted jobs back to
   * their queues, finish the jobs in flight, then leave. Cold: kill the
   * children; everything unfinished goes back (at least once). Calling
   * stop({ cold: true }) during a warm stop escalates it. Either way, once
   * the children are done, settlements the broker has not confirmed within
   * `deadline` (default 30 s; Redis may be away) are logged and dropped: at
   * least once, their jobs come back when the node's lease expires. A
   * broker that stopped answering adds to that at most 5 s for the call in
   * flight, 1 s for the last events, 5 s to leave the cluster and about 1 s
   * to close. Every call returns the same stop; rejects with OptionError
   * for a bad deadline.
   */
  stop(options: StopOptions = {}): Promise<void> {
    let deadline: number;
    try {
      checkKnownKeys(options, STOP_KEYS, 'stop() option', throwOptionError);
      // At most a timer's longest wait: Node fires a longer one at once, which would drop every unconfirmed settlement.
      deadline = optionalDuration('deadline', options.deadline, 'wait') ?? STOP_DEADLINE_MS;
    } catch (err) {
      return Promise.reject(err);
    }
    if (options.cold && !this.cold) {
      this.cold = true;
      if (this.stopping !== undefined) void this.pool.terminate();
    }
    this.stopping ??= this.shutdown(deadline);
    return this.stopping;
  }

  /**
   * Quiet (SIGTSTP of `prefork worker`, as Sidekiq's): the node stops
   * fetching from every queue for good; the jobs it holds run on and settle,
   * and it stays in the cluster until stopped. Returns false if it already was.
   */
  quiet(): boolean {
    if (this.pauses.isQuiet) return false;
    this.pauses.quiet();
    return true;
  }

  /** A snapshot of the node: its ids, queues, the Consumer's counters and the pool's stats. */
  stats(): WorkerStats {
    return {
      node: this.name,
      nodeId: this.nodeIdValue,
      queues: this.options.queues.map((q) => q.name),
      paused: this.pausedHere(),
      quiet: this.pauses.isQuiet,
      consumer: { ...this.consumer.counts },
      unacked: this.consumer.acker.backlog,
      settleBatches: { ...this.consumer.acker.batches },
      pool: this.pool.stats(),
      revoked: this.revocations.size,
    };
  }

  /** The URLs of the node's metrics and health endpoints (`metricsPort`, `healthPort`), once start() has bound them. */
  get endpoints(): EndpointUrls {
    return this.endpointsOpen?.urls ?? {};
  }

  /**
   * What /healthz (`live`) and /readyz (`ready`) answer, for an application
   * that serves its own probes: each says ok or not, and why, check by check.
   */
  health(): { live: HealthReport; ready: HealthReport } {
    const inputs = this.healthInputs();
    return { live: liveness(inputs), ready: readiness(inputs) };
  }

  private healthInputs(): HealthInputs {
    return {
      state: this.state,
      failure: this.failure?.message,
      consumer: this.consumer.health(),
      heartbeat: this.heartbeat.health(),
      leaseLapsedMs: this.heartbeat.lapsedFor(),
      fencing: this.fencing !== undefined,
    };
  }

  private async openEndpoints(): Promise<void> {
    const { metrics, health } = this.options;
    if (metrics === undefined && health === undefined) return;
    const queues = this.options.queues.map((q) => q.name);
    this.endpointsOpen = await NodeEndpoints.open(
      { metrics, health },
      {
        stats: () => this.stats(),
        taskNames: () => this.pool.taskNames,
        queueCounts: () => this.queueCounts(queues),
        liveness: () => liveness(this.healthInputs()),
        readiness: () => readiness(this.healthInputs()),
      },
      this.log.child({ component: 'endpoints' }),
    );
    const nodeMetrics = this.endpointsOpen.metrics;
    if (nodeMetrics === undefined) return;
    this.consumer.observe({ settled: (s, run, outcome) => nodeMetrics.settled(s, run, outcome) });
    this.pool.on('process-down', (e) => nodeMetrics.childExited(e.reason));
    this.pool.on('autoscale', (e) => nodeMetrics.scaled(e));
  }

  /** The node's queues' counts for a scrape: none when the broker cannot count, fails, or takes too long. */
  private async queueCounts(queues: readonly string[]): Promise<QueueCounts[] | undefined> {
    const admin = this.broker as Partial<BrokerAdmin>;
    if (typeof admin.counts !== 'function') return undefined;
    try {
      return await within(admin.counts.call(this.broker, queues), QUEUE_COUNTS_TIMEOUT_MS);
    } catch (err) {
      this.log.debug({ err }, 'queue counts for the metrics failed');
      return undefined;
    }
  }

  private async shutdown(deadline: number): Promise<void> {
    this.state = 'stopping';
    this.abortConnect.abort();
    this.log.info({ mode: this.cold ? 'cold' : 'warm' }, 'worker stopping');
    await this.scheduler?.stop();
    await this.consumer.stopFetching();
    // Jobs still in the pool's buffer never reached a child: give them back now.
    const withdrawn = this.pool.withdraw();
    if (this.cold) await this.pool.terminate();
    else await this.pool.close();
    // Let the pool's settled promises reach the Consumer, then push everything to the broker.
    await new Promise((resolve) => setImmediate(resolve));
    // A registration start() has on the wire: once it lands, this node leaves what it joined.
    await this.joining?.catch(() => undefined);
    if (this.registered) {
      await this.settleWithin(deadline);
      this.nodeEvent('node-offline');
      await within(this.events?.flush() ?? Promise.resolve(), EVENTS_FLUSH_MS);
      this.events?.close();
      const given = { up: false };
      if (
        (await within(
          this.leave(given).then(() => true),
          LEAVE_MS,
        )) !== true
      ) {
        given.up = true;
        this.log.warn(
          { leaveMs: LEAVE_MS },
          `could not leave the cluster within ${LEAVE_MS} ms (the broker does not answer): the node's lease expires by itself`,
        );
      }
    }
    if (this.ownsBroker) await this.broker.close();
    this.state = 'stopped';
    await this.opening?.catch(() => undefined);
    await this.endpointsOpen?.close();
    this.log.info({ givenBack: this.consumer.counts.givenBack, withdrawn }, 'worker stopped');
    this.emit('stopped');
  }

  /** Ends the node's part in the cluster; once `given.up` (the stop went on without it), unregisters no more. */
  private async leave(given: { up: boolean }): Promise<void> {
    await this.unwatchControl?.();
    await this.heartbeat.stop();
    await this.adopting;
    await this.leadership.stop();
    if (given.up) return;
    await this.broker
      .unregister(this.nodeIdValue)
      // Given up on meanwhile, it failed when the broker closed: the lease was left to expire, as logged.
      .catch((err: unknown) => this.log[given.up ? 'debug' : 'warn']({ err }, 'could not unregister the node'));
  }

  /** The rates set at run time (`prefork control rate-limit`); later changes come as control requests. */
  private async loadRateLimits(): Promise<void> {
    await this.rates.load().catch((err: unknown) => {
      this.log.warn(
        { err },
        'could not read the rate limits set at run time; control requests and fetches update them',
      );
    });
  }

  /** Waits for the broker to confirm what the Consumer settled; past `deadline` ms, logs and drops the rest. */
  private async settleWithin(deadline: number): Promise<void> {
    // within() clears its timer: none may outlive the stop (it would keep the process alive until the deadline).
    const confirmed = await within(
      this.consumer.acker.flush().then(() => true),
      deadline,
    );
    if (confirmed === true) return;
    const dropped = this.consumer.acker.abandon();
    if (dropped.length === 0) return;
    this.log.error(
      {
        unconfirmed: dropped.length,
        jobIds: dropped.slice(0, DROPPED_IDS_LOGGED).map((s) => s.delivery.job.id),
        deadlineMs: deadline,
      },
      `the broker did not confirm ${dropped.length} settlements within the stop deadline (${deadline} ms); dropping them: their jobs stay reserved by this node and go back to their queues when its lease expires (they may run again)`,
    );
  }

  /**
   * The pool failed: children keep dying before they can work (a task module
   * that no longer loads, a restart storm). Nothing more can run here, so stop
   * fetching, give every job held back to the broker (the Consumer maps the
   * pool's failure to a give-back, for the jobs in flight too), leave the
   * cluster, and emit 'failed' so the process can exit non-zero.
   */
  private poolFailed(err: PoolFailedError): void {
    this.consumer.poolFailed(err);
    this.failWith(err);
  }

  /**
   * Nothing more can run or be fetched here (the pool failed, the Consumer
   * crashed): stop warm (jobs running finish, the rest go back; unregistering
   * returns whatever is still reserved), then emit 'failed'.
   */
  private failWith(err: WorkerFailure): void {
    if (this.failure !== undefined) return;
    this.failure = err;
    if (this.state === 'created' || this.state === 'connecting') return; // start() reports it
    // During a stop too (a warm stop waits for jobs that need children): the process must not exit as if all went well.
    const what = !(err instanceof ConsumerFailedError)
      ? 'the pool failed'
      : err.cause instanceof BrokerRefusedError
        ? 'the broker refused what the consumer asked for (it would refuse it again)'
        : 'the consumer crashed';
    this.log.error({ err }, `${what}, so this node stops: ${err.message}; its jobs go back to their queues`);
    void this.stop().then(
      () => this.emit('failed', err),
      (stopErr: unknown) => {
        this.log.error({ err: stopErr }, `stopping after ${what} did not finish cleanly`);
        this.emit('failed', err);
      },
    );
  }

  private async connect(): Promise<void> {
    // Aborted by a stop, or by a pool that failed to start: nothing would run here.
    for (let attempt = 0; this.state === 'connecting' && !this.abortConnect.signal.aborted; attempt++) {
      try {
        await this.broker.connect();
        if (attempt > 0) this.log.info({ broker: this.broker.displayUrl }, 'connected to the broker');
        return;
      } catch (err) {
        // A wrong password or a database Redis does not have will not heal by itself: the start fails, naming it.
        if (err instanceof BrokerRefusedError) throw err;
        const wait = retryDelay(attempt, CONNECT_RETRY);
        // One warning per start, as the Consumer does per outage: a line per attempt says nothing new.
        this.log[attempt === 0 ? 'warn' : 'debug'](
          { broker: this.broker.displayUrl, retryInMs: wait, attempt: attempt + 1 },
          `${messageOf(err)}; retrying until it answers (every ${CONNECT_RETRY.cap / 1000} s at most)`,
        );
        await abortableSleep(wait, this.abortConnect.signal);
      }
    }
  }

  /** A registration sent at `sentAt` gave this node a fresh lease: jobs held back for want of one may start. */
  private leaseRenewed(sentAt: number): void {
    this.heartbeat.renewed(sentAt);
    this.pool.resumeDispatch();
  }

  /**
   * What a fetch or a heartbeat does when the broker says `seenAs` lost its
   * lease (`leaseRanOut`: as after a stall past it, so held jobs are dropped).
   * For tests: a real fence needs the node stalled past its lease (and the
   * recovered jobs then come back to it), and a late second report of one
   * fence is a race no public call can order.
   * @internal
   */
  reportFenced(seenAs: string, options: { leaseRanOut?: boolean } = {}): Promise<void> {
    if (options.leaseRanOut === true) this.heartbeat.forgetLease();
    return this.fenced(seenAs);
  }

  /**
   * Fenced (seen by a fetch or a heartbeat under `seenAs`): a fresh id and
   * lease; the unstarted jobs are dropped only if the lease had run out
   * (docs/architecture.md). Once per lost lease: a second report of the same
   * id finds it already replaced (re-fencing would drop jobs just fetched).
   */
  private fenced(seenAs: string): Promise<void> {
    if (this.fencing !== undefined) return this.fencing;
    if (seenAs !== this.nodeIdValue || this.state !== 'running') return Promise.resolve();
    const lapsedMs = Math.round(this.heartbeat.lapsedFor());
    this.nodeEvent('node-fenced');
    this.fencing = (async () => {
      // A takeover on the wire registers the current id: let it land before the id changes.
      await this.adopting;
      const old = this.nodeIdValue;
      this.nodeIdValue = newNodeId(this.name);
      const keeps = lapsedMs === 0;
      if (keeps) {
        this.consumer.nodeIdChanged();
        this.log.warn(
          { oldNodeId: old, nodeId: this.nodeIdValue },
          "this node's registration vanished from the broker while its lease was still running: Redis lost its data (a restart without persistence, a flush, a failover to a replica that had not caught up); nobody else took this node's jobs, so it keeps and runs them; re-registering under a new id, which takes over what the old one holds",
        );
      } else {
        const dropping = this.consumer.dropBuffered();
        this.log.warn(
          { oldNodeId: old, nodeId: this.nodeIdValue, lapsedMs },
          `this node lost its lease (fenced): no heartbeat renewed it in time (it ran out ${lapsedMs} ms ago: the process stalled or the broker was unreachable), so another node recovers its jobs; re-registering under a new id`,
        );
        // Counted once the children answered for the jobs in their pipes, not only the pool's buffer.
        void dropping.then((dropped) =>
          this.log.warn(
            { oldNodeId: old, dropped },
            `dropped ${dropped} jobs this node held but had not started (fenced: they run elsewhere)`,
          ),
        );
      }
      // After a lost lease the unstarted jobs were dropped: what an older id still holds is the orphan sweep's.
      if (keeps) this.unadopted.add(old);
      else this.unadopted.clear();
      const sentAt = performance.now();
      await this.broker.register(this.nodeInfo());
      this.leaseRenewed(sentAt);
      await this.adoptKept();
      // Revokes, pauses and rates set while it was not registered went to its old id: read them again.
      await Promise.all([this.loadRevoked(), this.loadPauses(), this.loadRateLimits()]);
    })().finally(() => {
      this.fencing = undefined;
    });
    return this.fencing;
  }

  /**
   * Says so when other live nodes have this node's name. Jobs are safe (each
   * node has its own id and lease), but a name addresses every node that has
   * it. Not refused: a node restarted at once meets its own previous run,
   * whose lease has yet to run out.
   */
  private async warnOfNamesakes(): Promise<void> {
    let nodes: NodeInfo[];
    try {
      nodes = await this.broker.listNodes();
    } catch (err) {
      this.log.debug({ err }, 'could not list the live nodes to look for another one of the same name');
      return;
    }
    const others = nodes.filter((n) => n.name === this.name && n.id !== this.nodeIdValue);
    if (others.length === 0) return;
    this.log.warn(
      { others: others.map((n) => ({ nodeId: n.id, host: n.host, pid: n.pid })) },
      `${others.length === 1 ? 'another live node is' : `${others.length} other live nodes are`} named '${this.name}' (${others.map((n) => `${n.id}, pid ${n.pid} on ${n.host}`).join('; ')}): each keeps its own jobs and lease, but results and events name them alike, and \`--node ${this.name}\` (prefork control, pause) reaches all of them; give each node its own name (-n). If it is this node's previous run, it is recovered once its lease runs out`,
    );
  }

  /**
   * Moves what this node reserved under the ids in `unadopted` to its
   * current id (`register` with `adoptFrom`): its lease then covers those
   * jobs, and no orphan sweep takes them while they run. A failed call is
   * logged and left for the next heartbeat.
   */
  private adoptKept(): Promise<void> {
    this.adopting ??= (async () => {
      // Ids added while one is on the wire (a second fencing) are taken in the same run.
      for (let old = first(this.unadopted); old !== undefined; old = first(this.unadopted)) {
        // A stopping node unregisters: registering it again would leave a ghost behind.
        if (this.state !== 'running') return;
        const adopted = await this.broker.register(this.nodeInfo(), old);
        this.unadopted.delete(old);
        if (adopted > 0)
          this.log.info(
            { oldNodeId: old, jobs: adopted },
            `the new id took over ${adopted} jobs reserved under the old one`,
          );
      }
    })()
      .catch((err: unknown) =>
        this.log.warn(
          { err, oldNodeIds: [...this.unadopted] },
          'could not move the jobs reserved under the old id to the new one; trying again after the next heartbeat',
        ),
      )
      .finally(() => (this.adopting = undefined));
    return this.adopting;
  }

  private async loadPauses(): Promise<void> {
    const pauses = await this.broker.listPaused();
    // A resync's read under way may be older than this one.
    this.resync.changed();
    this.pauses.load(pauses);
    const paused = this.pausedHere();
    if (paused.length > 0) this.log.info({ paused }, `paused queues, not fetched from: ${paused.join(', ')}`);
  }

  /** Its own queues paused now. */
  private pausedHere(): string[] {
    return this.pauses.queues.filter((q) => this.options.queues.some((spec) => spec.name === q));
  }

  /** A pause or resume control request (already remembered in the broker): what this node fetches from follows. */
  private pauseQueue(queue: string, scope: PauseScope, pause: boolean): { paused: string[]; consumed: boolean } {
    this.resync.changed();
    if (pause) this.pauses.pause(queue, scope);
    else this.pauses.resume(queue, scope);
    return { paused: this.pausedHere(), consumed: this.options.queues.some((q) => q.name === queue) };
  }

  /** The pool's size and autoscale bounds now, as control replies report them. */
  private sizing(): { processes: number; autoscale?: { max: number; min: number } } {
    const autoscale = this.pool.autoscaleBounds;
    return autoscale === undefined ? { processes: this.pool.size } : { processes: this.pool.size, autoscale };
  }

  /**
   * The pool was resized or its bounds changed (a control command, a signal,
   * a call on `pool`): the prefetch limit follows, and so does the node's
   * description (`prefork inspect nodes`).
   */
  private resized(): void {
    this.consumer.resize(prefetchProcesses(this.pool));
    if (!this.registered) return;
    const nodeId = this.nodeIdValue;
    this.broker.updateNode(nodeId, { concurrency: this.concurrency() }).then(
      (live) => {
        if (!live) this.log.debug({ nodeId }, 'node not live: its description was not updated');
      },
      (err: unknown) => this.log.warn({ err }, "could not update the node's description in the broker"),
    );
  }

  /** Its number of children, or "max,min" with autoscale. */
  private concurrency(): string {
    const bounds = this.pool.autoscaleBounds;
    return bounds ? `${bounds.max},${bounds.min}` : String(this.pool.size);
  }

  private async loadRevoked(): Promise<void> {
    const jobs = await this.broker.listRevoked();
    this.revocations.load(jobs);
    this.resync.readRevoked(jobs);
    if (jobs.length > 0) this.log.debug({ revoked: jobs.length }, 'loaded the revoked job ids');
  }

  /**
   * Revoked ids a resync read that no request told this node of (it lapsed
   * before the node took it): remembered, and the jobs held here that have
   * not started never run. Without the request's options, a running one
   * runs on, as a revoke without `terminate` leaves it.
   */
  private revokedUntold(jobs: readonly RevokedJob[]): void {
    const untold = this.revocations.untold(jobs);
    let unstarted = 0;
    for (const job of untold)
      unstarted += this.revoke([job.id], { terminate: false, grace: 0 }, job.expiresAt).unstarted;
    if (untold.length > 0)
      this.log.info(
        { revoked: untold.length, unstarted },
        `${untold.length} revoked job(s) no request told this node of (it lapsed): ${unstarted} held here will not run`,
      );
  }

  /** A revoke control request: remembered, and the jobs held here stop (unstarted ones never run). */
  private revoke(ids: string[], options: RevokeOptions, expiresAt: number): CancelledJobs {
    this.revocations.add(ids, expiresAt);
    let unstarted = 0;
    let running = 0;
    for (const id of ids) {
      const found = this.pool.cancel(
        id,
        new RevokedError(id, options.terminate),
        options.terminate ? { grace: options.grace } : undefined,
      );
      unstarted += found.unstarted;
      running += found.running;
      if (found.running > 0)
        this.log.info(
          { jobId: id, terminate: options.terminate, graceMs: options.grace },
          options.terminate
            ? 'revoked job is running: stopping it'
            : 'revoked job is running: it runs on (no terminate)',
        );
    }
    return { unstarted, running };
  }

  private nodeInfo(): NodeInfo {
    const o = this.options;
    return {
      id: this.nodeIdValue,
      name: this.name,
      host: hostname(),
      pid: process.pid,
      queues: o.queues.map((q) => q.name),
      concurrency: this.concurrency(),
      startedAt: Date.now(),
      ...(this.scheduler !== undefined ? { schedule: this.scheduler.names } : {}),
    };
  }
}

/** What the prefetch limit is sized from: the pool's size, or with autoscale its max (so a burst can grow the pool). */
function prefetchProcesses(pool: Pool): number {
  return pool.autoscaleBounds?.max ?? pool.size;
}

function newNodeId(name: string): string {
  return `${name}#${randomBytes(4).toString('hex')}`;
}

/** The oldest member of a set (its insertion order), or undefined. */
function first<T>(set: ReadonlySet<T>): T | undefined {
  for (const value of set) return value;
  return undefined;
}
