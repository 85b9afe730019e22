import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { defaultBrokerUrl } from './broker/default-url.js';
import type { BrokerConnection, BrokerConsumer, BrokerControl, BrokerMembership } from './broker/types.js';
import { JOB_LOG_LEVELS, type JobLogLevel } from './consumer/job-log.js';
import { parseQueues, QUEUE_ORDERS, type QueueOrder, type QueueSpec } from './consumer/queue-selection.js';
import { OptionError } from './errors.js';
import { optionalDuration, type PoolOptions, type StrategyName } from './pool/options.js';
import { parseAutoscale } from './util/units.js';

/** The broker roles a Worker uses: it consumes, holds a lease and answers control requests. */
export type WorkerBroker = BrokerConnection & BrokerConsumer & BrokerMembership & BrokerControl;

/** What `new Worker(options)` accepts; pool settings not listed here go in `pool`. */
export interface WorkerOptions {
  /** Path of the task module. */
  app: string;
  /** A broker URL (`redis://`, `rediss://`, `memory://`) or a Broker instance (default `$PREFORK_BROKER_URL`, else redis://127.0.0.1:6379). */
  broker?: string | WorkerBroker;
  /** Fixed number of children (default: the number of CPUs). */
  concurrency?: number;
  /** "max,min" or [max, min]: size the pool from reserved requests; the prefetch limit follows max. */
  autoscale?: string | [number, number];
  strategy?: StrategyName;
  /** Queues to consume, e.g. "critical:3,default" (default "default"). */
  queues?: string | (string | QueueSpec)[];
  /** round-robin (default), weighted (default when a weight is given) or strict. */
  queueOrder?: QueueOrder;
  /** Jobs held per process, buffered + running (default 4, as Celery). */
  prefetchMultiplier?: number;
  maxTasksPerChild?: number;
  maxMemoryPerChild?: number | string;
  timeLimit?: number | string;
  softTimeLimit?: number | string;
  /** The node's name (default `<pid>@<hostname>`). */
  name?: string;
  /** A job delivered more often than this without an outcome is a poison job: dead set (default 5). */
  maxRedeliveries?: number;
  /** Also record RECEIVED and STARTED states (default false, as Celery's track_started). */
  trackStarted?: boolean;
  /**
   * The level of the per-job log lines (received, succeeded, retry asked by
   * the task): `debug` keeps a high-volume node's info log to what goes wrong.
   * Failures log at error either way.
   * @defaultValue `'info'`
   */
  jobLogLevel?: JobLogLevel;
  /** Broker settings when `broker` is a URL. */
  namespace?: string;
  /**
   * How long results are kept (ms or "1d").
   * @defaultValue 1 day
   */
  resultTtl?: number | string;
  /**
   * A node silent this long is presumed dead and its jobs recovered; heartbeats
   * renew it every 2/5 of it, on a timer, so at most 2^31-1 ms (about 24.8 days).
   * @defaultValue 20 s
   */
  leaseMs?: number | string;
  /** Any other Pool option (procAliveTimeout, keepalive, maxRestarts, execArgv, env, ...). */
  pool?: Omit<
    PoolOptions,
    | 'app'
    | 'processes'
    | 'autoscale'
    | 'strategy'
    | 'maxTasksPerChild'
    | 'maxMemoryPerChild'
    | 'timeLimit'
    | 'softTimeLimit'
    | 'logger'
  >;
  logger?: Logger;
}

export interface ResolvedWorkerOptions {
  broker: string | WorkerBroker;
  queues: QueueSpec[];
  queueOrder: QueueOrder;
  prefetchMultiplier: number;
  name: string;
  maxRedeliveries: number;
  trackStarted: boolean;
  jobLogLevel: JobLogLevel;
  namespace: string | undefined;
  resultTtl: number | undefined;
  leaseMs: number | undefined;
  pool: PoolOptions;
  logger: Logger | undefined;
}

const KNOWN = new Set([
  'app',
  'broker',
  'concurrency',
  'autoscale',
  'strategy',
  'queues',
  'queueOrder',
  'prefetchMultiplier',
  'maxTasksPerChild',
  'maxMemoryPerChild',
  'timeLimit',
  'softTimeLimit',
  'name',
  'maxRedeliveries',
  'trackStarted',
  'jobLogLevel',
  'namespace',
  'resultTtl',
  'leaseMs',
  'pool',
  'logger',
]);

/** One validation pass; pool options are validated again, fully, by the Pool itself. */
export function resolveWorkerOptions(input: WorkerOptions): ResolvedWorkerOptions {
  if (typeof input !== 'object' || input === null) throw new OptionError('options', input, 'an object');
  for (const key of Object.keys(input)) {
    if (!KNOWN.has(key))
      throw new OptionError(
        key,
        (input as unknown as Record<string, unknown>)[key],
        `a known Worker option (unknown option "${key}")`,
      );
  }
  const broker = input.broker ?? defaultBrokerUrl();
  if (
    typeof broker !== 'string' &&
    (typeof broker !== 'object' || broker === null || typeof broker.fetch !== 'function')
  ) {
    throw new OptionError('broker', broker, 'a broker URL or a Broker');
  }
  const queues = parseQueues(input.queues ?? 'default');
  const weighted = queues.some((q) => q.weight !== 1);
  const queueOrder = input.queueOrder ?? (weighted ? 'weighted' : 'round-robin');
  if (!QUEUE_ORDERS.includes(queueOrder))
    throw new OptionError('queueOrder', input.queueOrder, QUEUE_ORDERS.join(' | '));
  const prefetchMultiplier = input.prefetchMultiplier ?? 4;
  if (!Number.isInteger(prefetchMultiplier) || prefetchMultiplier < 1)
    throw new OptionError('prefetchMultiplier', input.prefetchMultiplier, 'an integer >= 1');
  const maxRedeliveries = input.maxRedeliveries ?? 5;
  if (!Number.isInteger(maxRedeliveries) || maxRedeliveries < 0)
    throw new OptionError('maxRedeliveries', input.maxRedeliveries, 'an integer >= 0');
  const jobLogLevel = input.jobLogLevel ?? 'info';
  if (!JOB_LOG_LEVELS.includes(jobLogLevel))
    throw new OptionError('jobLogLevel', input.jobLogLevel, JOB_LOG_LEVELS.join(' | '));
  const name = input.name ?? `${process.pid}@${hostname()}`;
  if (typeof name !== 'string' || name.length === 0) throw new OptionError('name', input.name, 'a non-empty string');
  if (input.autoscale !== undefined && parseAutoscale(input.autoscale) === undefined) {
    throw new OptionError(
      'autoscale',
      input.autoscale,
      '"max,min" or [max, min]: integers with max >= 1 and 0 <= min <= max',
    );
  }
  const pool: PoolOptions = { ...(input.pool ?? {}), app: input.app };
  if (input.concurrency !== undefined) pool.processes = input.concurrency;
  if (input.autoscale !== undefined) pool.autoscale = input.autoscale;
  if (input.strategy !== undefined) pool.strategy = input.strategy;
  if (input.maxTasksPerChild !== undefined) pool.maxTasksPerChild = input.maxTasksPerChild;
  if (input.maxMemoryPerChild !== undefined) pool.maxMemoryPerChild = input.maxMemoryPerChild;
  if (input.timeLimit !== undefined) pool.timeLimit = input.timeLimit;
  if (input.softTimeLimit !== undefined) pool.softTimeLimit = input.softTimeLimit;
  if (input.logger !== undefined) pool.logger = input.logger;
  return {
    broker,
    queues,
    queueOrder,
    prefetchMultiplier,
    name,
    maxRedeliveries,
    trackStarted: input.trackStarted ?? false,
    jobLogLevel,
    namespace: input.namespace,
    resultTtl: optionalDuration('resultTtl', input.resultTtl, 'positive'),
    // Heartbeats are timers of a fraction of it.
    leaseMs: optionalDuration('leaseMs', input.leaseMs, 'timer'),
    pool,
    logger: input.logger,
  };
}
