import type { Counter, Histogram, Registry } from 'prom-client';
import type { QueueCounts, Settlement } from '../broker/types.js';
import type { JobRun } from '../consumer/job-log.js';
import { outcomeOf } from '../consumer/outcome.js';
import type { ScaleEvent } from '../pool/autoscaler.js';
import type { ExitReason } from '../pool/exit-reason.js';
import type { ConsumerCounts } from '../consumer/consumer.js';
import type { PoolStats } from '../pool/stats.js';

/** The parts of `Worker.stats()` the metrics read. */
export interface StatsForMetrics {
  pool: PoolStats;
  consumer: ConsumerCounts;
  unacked: number;
}

/** What the metrics read from the node when Prometheus scrapes. */
export interface MetricsSource {
  stats(): StatsForMetrics;
  /** The tasks the node has: a job naming another one is labelled `task="(unknown)"`. */
  taskNames(): readonly string[];
  /** Jobs per queue of the node, or undefined when the broker cannot count (or did not answer in time). */
  queueCounts(): Promise<QueueCounts[] | undefined>;
}

/** The label for a task the node does not have: names from outside must not grow the label set. */
export const UNKNOWN_TASK = '(unknown)';

/** Seconds: from a no-op job (sub-millisecond) to long batch work. */
const RUNTIME_BUCKETS = [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];
const ROUNDTRIP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/** Node's process metrics, collected once per process for every node in it (processRegistry). */
let processMetrics: Registry | undefined;

/**
 * The process's metrics (prom-client's default ones: CPU, memory, event
 * loop lag, GC), made once. Each collectDefaultMetrics() call starts an
 * event loop monitor and a GC observer that nothing can stop, and that
 * observer holds its registry: made per node, every Worker that served
 * metrics stayed in memory after it stopped, with its pool and broker.
 */
function processRegistry(prom: typeof import('prom-client')): Registry {
  if (processMetrics === undefined) {
    processMetrics = new prom.Registry();
    prom.collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

/**
 * A node's Prometheus metrics (prom-client), in one registry of its own:
 * job counters and histograms fed as jobs settle (a Map lookup and an
 * increment per job, no Redis call), gauges read from the node's stats when
 * scraped, and Node's default process metrics (shared by the nodes of the
 * process: processRegistry). Labels are bounded: task
 * (the node's own tasks, else "(unknown)"), outcome, queue (the node's
 * queues), reason and direction from fixed sets; never a job id.
 */
export class NodeMetrics {
  /** The node's own metrics. */
  readonly registry: Registry;
  /** What a scrape shows: the node's metrics and the process's (processRegistry). */
  private readonly exposed: Registry;
  private readonly jobs: Counter<'task' | 'outcome'>;
  private readonly runtime: Histogram<'task'>;
  private readonly queueWait: Histogram<'task'>;
  private readonly restarts: Counter<'reason'>;
  private readonly scales: Counter<'direction'>;
  private readonly roundTrip: Histogram;
  private known = new Set<string>();
  private knownFrom: readonly string[] | undefined;
  /**
   * The queue counts being read: scrapes that come meanwhile share it. Each
   * read runs a script per queue on Redis, and the port answers whoever
   * reaches it: without this, 128 connections asking at once made 128
   * reads of every queue, on the Redis every node works from.
   */
  private counting: Promise<QueueCounts[] | undefined> | undefined;

  private constructor(
    prom: typeof import('prom-client'),
    private readonly source: MetricsSource,
  ) {
    const registry = new prom.Registry();
    this.registry = registry;
    const registers = [registry];
    this.jobs = new prom.Counter({
      name: 'prefork_jobs_total',
      help: 'Jobs settled by this node, by task and outcome (succeeded, failed, retried, given_back, revoked).',
      labelNames: ['task', 'outcome'],
      registers,
    });
    this.runtime = new prom.Histogram({
      name: 'prefork_job_runtime_seconds',
      help: 'Time a job ran in a child, from its start to its outcome.',
      labelNames: ['task'],
      buckets: RUNTIME_BUCKETS,
      registers,
    });
    this.queueWait = new prom.Histogram({
      name: 'prefork_job_queue_wait_seconds',
      help: "Time from enqueue (the producer's clock) to the start in a child, first attempts only (a delayed job's delay included).",
      labelNames: ['task'],
      buckets: WAIT_BUCKETS,
      registers,
    });
    this.restarts = new prom.Counter({
      name: 'prefork_child_restarts_total',
      help: 'Children replaced other than on purpose, by reason (died, time-limit, protocol-error, killed).',
      labelNames: ['reason'],
      registers,
    });
    this.scales = new prom.Counter({
      name: 'prefork_scale_events_total',
      help: 'Times the Autoscaler resized the pool, by direction (up, down).',
      labelNames: ['direction'],
      registers,
    });
    this.roundTrip = new prom.Histogram({
      name: 'prefork_broker_roundtrip_seconds',
      help: "Round trip of the node's heartbeat call to the broker (Redis): sent to reply.",
      buckets: ROUNDTRIP_BUCKETS,
      registers,
    });
    const stats = (): StatsForMetrics => this.source.stats();
    new prom.Gauge({
      name: 'prefork_pool_processes',
      help: 'Children the pool has now (starting, idle, busy or stopping).',
      registers,
      collect() {
        this.set(stats().pool.processes.filter((p) => p.state !== 'exited').length);
      },
    });
    new prom.Gauge({
      name: 'prefork_pool_busy_processes',
      help: 'Children running a job now.',
      registers,
      collect() {
        this.set(stats().pool.processes.filter((p) => p.state === 'busy').length);
      },
    });
    new prom.Gauge({
      name: 'prefork_reserved_requests',
      help: 'Jobs fetched by this node and not yet settled (buffered or running): what the Autoscaler sizes the pool from.',
      registers,
      collect() {
        this.set(stats().consumer.reserved);
      },
    });
    new prom.Gauge({
      name: 'prefork_unacked_settlements',
      help: 'Settlements made and not yet confirmed by the broker.',
      registers,
      collect() {
        this.set(stats().unacked);
      },
    });
    new prom.Gauge({
      name: 'prefork_parent_resident_memory_bytes',
      help: "The node's parent process resident set size.",
      registers,
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    new prom.Gauge({
      name: 'prefork_children_resident_memory_bytes',
      help: "The children's resident set sizes, summed.",
      registers,
      collect() {
        this.set(stats().pool.processes.reduce((sum, p) => sum + (p.rss ?? 0), 0));
      },
    });
    const countsOf = (): Promise<QueueCounts[] | undefined> =>
      (this.counting ??= this.source.queueCounts().finally(() => (this.counting = undefined)));
    new prom.Gauge({
      name: 'prefork_queue_jobs',
      help: "Jobs in each of the node's queues by state (waiting, reserved, delayed, dead), read from the broker when scraped.",
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        const counts = await countsOf();
        this.reset();
        for (const c of counts ?? []) {
          this.set({ queue: c.queue, state: 'waiting' }, c.waiting);
          this.set({ queue: c.queue, state: 'reserved' }, c.reserved);
          this.set({ queue: c.queue, state: 'delayed' }, c.delayed);
          this.set({ queue: c.queue, state: 'dead' }, c.dead);
        }
      },
    });
    this.exposed = prom.Registry.merge([processRegistry(prom), registry]);
  }

  /** prom-client is loaded only by a node that serves metrics. */
  static async create(source: MetricsSource): Promise<NodeMetrics> {
    return new NodeMetrics(await import('prom-client'), source);
  }

  /** The Prometheus text exposition, and its content type. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    return { body: await this.exposed.metrics(), contentType: this.exposed.contentType };
  }

  settled(s: Settlement, run: JobRun | undefined, result: unknown): void {
    const outcome = outcomeOf(s, result);
    if (outcome === undefined) return;
    const { job } = s.delivery;
    const task = this.taskLabel(job.task);
    this.jobs.inc({ task, outcome });
    if (run?.startedAt === undefined) return;
    this.runtime.observe({ task }, Math.max(0, run.finishedAt - run.startedAt) / 1000);
    if (job.attempt === 0 && job.redeliveries === 0)
      this.queueWait.observe({ task }, Math.max(0, run.startedAt - job.enqueuedAt) / 1000);
  }

  childExited(reason: ExitReason): void {
    if (reason !== 'retired') this.restarts.inc({ reason });
  }

  scaled(event: ScaleEvent): void {
    this.scales.inc({ direction: event.direction });
  }

  brokerRoundTrip(ms: number): void {
    this.roundTrip.observe(ms / 1000);
  }

  private taskLabel(task: string): string {
    const names = this.source.taskNames();
    // The pool learns its task names when the first child is up; rebuilt when that list changes.
    if (names !== this.knownFrom) {
      this.known = new Set(names);
      this.knownFrom = names;
    }
    return this.known.has(task) ? task : UNKNOWN_TASK;
  }
}
