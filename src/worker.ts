import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { createBroker } from './broker/index.js';
import type { Broker, NodeInfo } from './broker/types.js';
import { Heartbeat } from './cluster/heartbeat.js';
import { Consumer, type ConsumerCounts } from './consumer/consumer.js';
import { QueueSelection } from './consumer/queue-selection.js';
import { PoolClosedError, messageOf } from './errors.js';
import { defaultLogger } from './logger.js';
import { Pool } from './pool/pool.js';
import type { PoolStats } from './pool/stats.js';
import { resolveWorkerOptions, type ResolvedWorkerOptions, type WorkerOptions } from './worker-options.js';

const CONNECT_RETRY_MIN_MS = 500;
const CONNECT_RETRY_MAX_MS = 10_000;

export interface WorkerStats {
  node: string;
  nodeId: string;
  queues: string[];
  consumer: ConsumerCounts;
  /** Settlements produced but not yet confirmed by the broker. */
  unacked: number;
  pool: PoolStats;
}

export interface WorkerEvents {
  ready: [{ nodeId: string }];
  stopped: [];
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
  readonly options: ResolvedWorkerOptions;
  readonly pool: Pool;
  readonly broker: Broker;
  readonly name: string;
  private nodeIdValue: string;
  private readonly log: Logger;
  private readonly ownsBroker: boolean;
  private readonly consumer: Consumer;
  private readonly heartbeat: Heartbeat;
  private state: WorkerState = 'created';
  private stopping: Promise<void> | undefined;
  private cold = false;
  private fencing: Promise<void> | undefined;
  private readonly abortConnect = new AbortController();

  constructor(options: WorkerOptions) {
    super();
    this.options = resolveWorkerOptions(options);
    const o = this.options;
    this.name = o.name;
    this.nodeIdValue = newNodeId(o.name);
    this.log = (o.logger ?? defaultLogger()).child({ node: o.name });
    this.pool = new Pool({ ...o.pool, logger: this.log });
    this.ownsBroker = typeof o.broker === 'string';
    this.broker = typeof o.broker === 'string'
      ? createBroker(o.broker, { namespace: o.namespace, resultTtl: o.resultTtl, leaseMs: o.leaseMs, logger: this.log })
      : o.broker;
    const processes = this.pool.options.autoscale?.max ?? this.pool.options.processes;
    this.consumer = new Consumer({
      broker: this.broker,
      pool: this.pool,
      selection: new QueueSelection(o.queues, o.queueOrder),
      nodeId: () => this.nodeIdValue,
      nodeName: o.name,
      // With autoscale the prefetch limit follows max (Celery's _update_consumer_prefetch_count), so a burst can grow the pool.
      prefetchLimit: () => o.prefetchMultiplier * processes,
      trackStarted: o.trackStarted,
      log: this.log.child({ component: 'consumer' }),
    });
    this.consumer.onFenced(() => this.fenced());
    this.heartbeat = new Heartbeat(this.broker, Math.max(250, Math.floor(this.broker.leaseMs / 4)), o.maxRedeliveries, {
      nodeId: () => this.nodeIdValue,
      queues: () => o.queues.map((q) => q.name),
      onFenced: () => this.fenced(),
      onDue: (at) => this.consumer.noteDue(at),
    }, this.log.child({ component: 'heartbeat' }));
  }

  /** The id this node is registered under in the broker (changes if the node is fenced and re-registers). */
  get nodeId(): string {
    return this.nodeIdValue;
  }

  /**
   * Connects (retrying while the broker is unreachable, with a clear log line
   * each time), registers the node, starts the pool and begins consuming.
   */
  async start(): Promise<void> {
    if (this.state !== 'created') throw new PoolClosedError(`start() called on a worker that is ${this.state}`);
    this.state = 'connecting';
    await this.connect();
    if (this.state !== 'connecting') return;
    await this.broker.register(this.nodeInfo());
    await this.pool.start();
    this.state = 'running';
    this.heartbeat.start();
    this.consumer.start();
    this.log.info({ nodeId: this.nodeIdValue, queues: this.options.queues.map((q) => q.name) }, 'worker ready');
    this.emit('ready', { nodeId: this.nodeIdValue });
  }

  /**
   * Warm (default): stop fetching, give buffered-but-unstarted jobs back to
   * their queues, finish the jobs in flight, then leave. Cold: kill the
   * children; everything unfinished goes back (at least once). Calling
   * stop({ cold: true }) during a warm stop escalates it.
   */
  stop(options: { cold?: boolean } = {}): Promise<void> {
    if (options.cold && !this.cold) {
      this.cold = true;
      if (this.stopping !== undefined) void this.pool.terminate();
    }
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  stats(): WorkerStats {
    return {
      node: this.name,
      nodeId: this.nodeIdValue,
      queues: this.options.queues.map((q) => q.name),
      consumer: { ...this.consumer.counts },
      unacked: this.consumer.acker.backlog,
      pool: this.pool.stats(),
    };
  }

  private async shutdown(): Promise<void> {
    const wasRunning = this.state === 'running';
    this.state = 'stopping';
    this.abortConnect.abort();
    this.log.info({ mode: this.cold ? 'cold' : 'warm' }, 'worker stopping');
    await this.consumer.stopFetching();
    // Jobs still in the pool's buffer never reached a child: give them back now.
    const withdrawn = this.pool.withdraw();
    if (this.cold) await this.pool.terminate();
    else await this.pool.close();
    // Let the pool's settled promises reach the Consumer, then push everything to the broker.
    await new Promise((resolve) => setImmediate(resolve));
    if (wasRunning) {
      await this.consumer.acker.flush();
      await this.heartbeat.stop();
      await this.broker.unregister(this.nodeIdValue).catch((err: unknown) => this.log.warn({ err }, 'could not unregister the node'));
    }
    if (this.ownsBroker) await this.broker.close();
    this.state = 'stopped';
    this.log.info({ givenBack: this.consumer.counts.givenBack, withdrawn }, 'worker stopped');
    this.emit('stopped');
  }

  private async connect(): Promise<void> {
    for (let attempt = 0; this.state === 'connecting'; attempt++) {
      try {
        await this.broker.connect();
        if (attempt > 0) this.log.info({ broker: this.broker.displayUrl }, 'connected to the broker');
        return;
      } catch (err) {
        const wait = Math.min(CONNECT_RETRY_MAX_MS, CONNECT_RETRY_MIN_MS * 2 ** attempt);
        this.log.error({ broker: this.broker.displayUrl, retryInMs: wait }, `cannot reach the broker at ${this.broker.displayUrl}: ${messageOf(err)}; retrying`);
        await abortableSleep(wait, this.abortConnect.signal);
      }
    }
  }

  /** Fenced (seen by a fetch or a heartbeat, once either way): drop the buffer, take a fresh id and lease. */
  private fenced(): Promise<void> {
    this.fencing ??= (async () => {
      const dropped = this.consumer.dropBuffered();
      const old = this.nodeIdValue;
      this.nodeIdValue = newNodeId(this.name);
      this.log.warn({ oldNodeId: old, nodeId: this.nodeIdValue, dropped }, 'this node lost its lease (fenced): another node recovered its jobs; re-registering under a new id');
      await this.broker.register(this.nodeInfo());
    })().finally(() => {
      this.fencing = undefined;
    });
    return this.fencing;
  }

  private nodeInfo(): NodeInfo {
    const o = this.options;
    const pool = this.pool.options;
    return {
      id: this.nodeIdValue,
      name: this.name,
      host: hostname(),
      pid: process.pid,
      queues: o.queues.map((q) => q.name),
      concurrency: pool.autoscale ? `${pool.autoscale.max},${pool.autoscale.min}` : String(pool.processes),
      startedAt: Date.now(),
    };
  }
}

function newNodeId(name: string): string {
  return `${name}#${randomBytes(4).toString('hex')}`;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
