import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { defaultBrokerUrl } from './broker/default-url.js';
import type {
  BrokerConnection,
  BrokerConsumer,
  BrokerControl,
  BrokerEvents,
  BrokerMembership,
  BrokerRevokes,
  BrokerPauses,
  BrokerRateLimits,
  BrokerSchedule,
} from './broker/types.js';
import { JOB_LOG_LEVELS, type JobLogLevel } from './consumer/job-log.js';
import { parseQueues, QUEUE_ORDERS, type QueueOrder, type QueueSpec } from './consumer/queue-selection.js';
import { OptionError } from './errors.js';
import { checkKnownKeys, throwOptionError } from './job-option-checks.js';
import { checkLease, checkNamespace } from './broker/broker-options.js';
import { optionalDuration, type PoolOptions, type StrategyName } from './pool/options.js';
import { PREFETCH_MAX } from './consumer/prefetch.js';
import { AUTOSCALE_EXPECTED, checkInteger, MAX_PROCESSES, parseAutoscale } from './util/units.js';
import { isSchedule, type Schedule } from './schedule/define.js';

/** The broker roles a Worker uses: it consumes, holds a lease, answers control requests, reads the revoked ids and paused queues, follows rate limits, publishes events and runs its schedule. */
export type WorkerBroker = BrokerConnection &
  BrokerConsumer &
  BrokerMembership &
  BrokerControl &
  BrokerRevokes &
  BrokerEvents &
  Pick<BrokerPauses, 'listPaused'> &
  BrokerRateLimits &
  BrokerSchedule;

/**
 * What `new Worker(options)` accepts; pool settings not listed here go in
 * `pool`. A bad or unknown option throws an OptionError naming it.
 * Durations are ms or strings like "30s"; sizes are bytes or strings like "512MB".
 */
export interface WorkerOptions {
  /** Path of the task module (its default export is `defineTasks({...})`). */
  app: string;
  /**
   * A broker URL (`redis://`, `rediss://`, `memory://[name]`) or a Broker
   * instance (which the worker then does not close), without a
   * `commandTimeout`.
   * @defaultValue `$PREFORK_BROKER_URL`, else `redis://127.0.0.1:6379`
   */
  broker?: string | WorkerBroker;
  /**
   * Fixed number of children (the Pool's `processes`), at most 4096. Ignored when `autoscale` is set.
   * @defaultValue the number of CPUs (`os.availableParallelism()`), or `maxConcurrency` if smaller
   */
  concurrency?: number;
  /**
   * The most children the node may have: `prefork control grow` stops there;
   * `concurrency` and autoscale's max may not exceed it (the Pool's `maxProcesses`). At most 4096.
   * @defaultValue 4 × the number of CPUs (at most 4096), or `concurrency` / autoscale's max if larger
   */
  maxConcurrency?: number;
  /**
   * "max,min" or [max, min]: size the pool between min and max children from
   * the reserved requests (max at most 4096); the prefetch limit follows max.
   * With min 0 the node still starts one child, so it knows its tasks and a
   * module that does not load fails the start; that child is retired after
   * the pool's `keepalive` if no job comes.
   * @defaultValue none: a fixed pool of `concurrency` children
   */
  autoscale?: string | [number, number];
  /**
   * How jobs go to children: 'fair' never lets a long job hold a short one
   * (jobs held ahead are taken back), 'fcfs' also queues them in busy ones'
   * pipes, where they stay (the Pool's `strategy`).
   * @defaultValue `'fair'`
   */
  strategy?: StrategyName;
  /**
   * Queues to consume: "critical:3,default", or an array of names or
   * `{ name, weight }`. Weights (integers from 1 to 10,000) matter under the
   * 'weighted' order.
   * @defaultValue `"default"`
   */
  queues?: string | (string | QueueSpec)[];
  /**
   * The order queues are taken in: 'round-robin' (equal shares), 'weighted'
   * (shares by weight) or 'strict' (the first queue until it is empty).
   * @defaultValue `'weighted'` when a queue has a weight other than 1, else `'round-robin'`
   */
  queueOrder?: QueueOrder;
  /**
   * Jobs the node holds per child, buffered and running (as Celery's
   * worker_prefetch_multiplier); with autoscale, per child of its max.
   * Given (1 to 1,024), it fixes the limit at `prefetchMultiplier × processes`.
   * @defaultValue none: the node sizes its prefetch itself, holding enough
   * jobs to cover a fetch round trip at the rate its children finish them,
   * from 4 per child up to 64 per child (with `fair`, more for jobs so
   * quick that the children finish more in 25 ms: as many as they finish in
   * 25 ms; 1,024 per node, fewer when the payloads are large); see the
   * guide's "Prefetch"
   */
  prefetchMultiplier?: number;
  /**
   * Replace a child after it has run this many jobs (a leak guard).
   * @defaultValue none: a child runs jobs for as long as it lives
   */
  maxTasksPerChild?: number;
  /**
   * Replace a child once its resident set size after a job is above this
   * (bytes or "512MB"; a bare number is bytes, where Celery's option counts
   * KiB). A limit below a child's RSS once it is up is logged as a warning.
   * @defaultValue none: no memory limit
   */
  maxMemoryPerChild?: number | string;
  /**
   * Hard limit per job (ms or "30s", at most 2^31-1 ms): past it the child is
   * SIGKILLed and the job fails with TimeLimitExceeded (it is retried if it has
   * retries left). A task's or a job's own limit wins over this one.
   * @defaultValue none: jobs may run for ever
   */
  timeLimit?: number | string;
  /**
   * Soft limit per job (ms or "30s", less than `timeLimit`): past it the
   * job's AbortSignal (`currentTask().signal`) aborts. A task's or a job's
   * own limit wins over this one.
   * @defaultValue none
   */
  softTimeLimit?: number | string;
  /**
   * The node's name, as `prefork inspect` and results show it. Give each
   * node its own: nodes of the same name keep their own jobs and leases, but
   * `--node NAME` (`prefork control`, a pause) reaches all of them; a node
   * that starts while another live node has its name logs a warning naming it.
   * @defaultValue `<pid>@<hostname>`
   */
  name?: string;
  /**
   * A job redelivered more than this many times without an outcome (its
   * node died under it, or gave it back at shutdown) is a poison job: when
   * recovered from a dead node, it goes to the dead set, not to its queue.
   * A retry is an outcome: the count starts again with each retry.
   * An integer from 0 to 2^53-1.
   * @defaultValue 5
   */
  maxRedeliveries?: number;
  /**
   * Also record the RECEIVED and STARTED states of each job (as Celery's
   * track_started), at the cost of more writes to the broker.
   * @defaultValue false
   */
  trackStarted?: boolean;
  /**
   * The level of the per-job log lines (received, succeeded, retry asked by
   * the task): `debug` keeps a high-volume node's info log to what goes wrong.
   * Failures log either way: at warn when a retry follows, at error when final.
   * @defaultValue `'info'`
   */
  jobLogLevel?: JobLogLevel;
  /**
   * The broker's key namespace, when `broker` is a URL (a Broker instance has
   * its own: beside one, this is refused). Workers and clients must share it
   * to see each other's jobs.
   * @defaultValue `"prefork"`
   */
  namespace?: string;
  /**
   * How long results are kept (ms or "1d", up to 100 years), when `broker`
   * is a URL (a Broker instance has its own: beside one, this is refused); a job enqueued by a Client
   * with its own `resultTtl` keeps its results that long instead.
   * @defaultValue 1 day
   */
  resultTtl?: number | string;
  /**
   * How long a silent node keeps its jobs before another node recovers them
   * (ms or a string like "20s"); heartbeats renew it every half of it, on a
   * timer, so at least 1 s (a shorter lease is lost to any late beat) and at
   * most 2^31-1 ms (about 24.8 days). Used when `broker` is a URL (a Broker
   * instance has its own: beside one, this is refused).
   * @defaultValue 20 s
   */
  lease?: number | string;
  /**
   * The old name of `lease`, still accepted (not both at once).
   * @deprecated Use `lease`.
   * @defaultValue 20 s
   */
  leaseMs?: number | string;
  /**
   * Any other Pool option (procAliveTimeout, keepalive, maxRestarts,
   * restartWindow, maxFrameSize, execArgv, env, killTimeout, ...).
   * @defaultValue `{}`: the Pool's defaults
   */
  pool?: Omit<
    PoolOptions,
    | 'app'
    | 'processes'
    | 'maxProcesses'
    | 'autoscale'
    | 'strategy'
    | 'maxTasksPerChild'
    | 'maxMemoryPerChild'
    | 'timeLimit'
    | 'softTimeLimit'
    | 'logger'
  >;
  /**
   * Write job, pool and node events to the broker's capped events stream
   * (`prefork events`, `client.events()`). They ride in the writes the node
   * makes anyway (one more command per batch of settlements, no round trip
   * per job).
   * @defaultValue true
   */
  events?: boolean;
  /**
   * Serve Prometheus metrics (prom-client's text format) at
   * `http://<metricsHost>:<port>/metrics`: jobs by task and outcome, runtime
   * and queue-wait histograms, queue depths, pool size, busy children,
   * reserved requests, restarts, scale events, memory, the broker's round
   * trip. 0 takes any free port (`worker.endpoints` says which). The same
   * port as `healthPort` serves both.
   * @defaultValue none: no metrics are served
   */
  metricsPort?: number;
  /**
   * The address the metrics port binds to.
   * @defaultValue `'0.0.0.0'` (every interface: scrapers and probes come from outside the host)
   */
  metricsHost?: string;
  /**
   * Serve health probes at `http://<healthHost>:<port>/healthz` (200 while the
   * pool, the fetch loop and the heartbeat are alive and turning; a frozen
   * Redis that answers neither loop leaves it 200) and
   * `/readyz` (200 only while running, holding the lease and reaching the
   * broker; 503 while starting, stopping, fenced or cut off, and once the
   * broker has answered no heartbeat for half the lease plus 2 s, or three
   * quarters of the lease if that is shorter). For
   * Kubernetes' liveness and readiness probes. 0 takes any free port.
   * @defaultValue none: no health endpoints
   */
  healthPort?: number;
  /**
   * The address the health port binds to (with `healthPort` equal to
   * `metricsPort`, the two must agree).
   * @defaultValue `'0.0.0.0'`
   */
  healthHost?: string;
  /**
   * A pino logger: the worker, its pool and its broker log through children of it.
   * @defaultValue pino on stdout at `info` (`$PREFORK_LOG_LEVEL` overrides), or the CLI's logger
   */
  logger?: Logger;
  /**
   * Periodic tasks this node enqueues (`defineSchedule({...})`). Every node
   * may run the same schedule: each tick fires once per cluster.
   * @defaultValue none
   */
  schedule?: Schedule;
}

export interface ResolvedWorkerOptions {
  broker: string | WorkerBroker;
  queues: QueueSpec[];
  queueOrder: QueueOrder;
  /** Undefined: self-sized. */
  prefetchMultiplier: number | undefined;
  name: string;
  maxRedeliveries: number;
  trackStarted: boolean;
  jobLogLevel: JobLogLevel;
  namespace: string | undefined;
  resultTtl: number | undefined;
  leaseMs: number | undefined;
  pool: PoolOptions;
  logger: Logger | undefined;
  events: boolean;
  /** Undefined: not served. */
  metrics: Endpoint | undefined;
  health: Endpoint | undefined;
  schedule: Schedule | undefined;
}

/** Where a node serves its metrics or health probes. */
export interface Endpoint {
  host: string;
  port: number;
}

const KNOWN = new Set([
  'app',
  'broker',
  'concurrency',
  'maxConcurrency',
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
  'lease',
  'leaseMs',
  'pool',
  'logger',
  'events',
  'metricsPort',
  'metricsHost',
  'healthPort',
  'healthHost',
  'schedule',
]);

const DEFAULT_ENDPOINT_HOST = '0.0.0.0';

/** One validation pass; pool options are validated again, fully, by the Pool itself. */
export function resolveWorkerOptions(input: WorkerOptions): ResolvedWorkerOptions {
  if (typeof input !== 'object' || input === null) throw new OptionError('options', input, 'an object');
  checkKnownKeys(input, KNOWN, 'Worker option', throwOptionError);
  const broker = input.broker ?? defaultBrokerUrl();
  if (
    typeof broker !== 'string' &&
    (typeof broker !== 'object' || broker === null || typeof broker.fetch !== 'function')
  ) {
    throw new OptionError('broker', broker, 'a broker URL or a Broker');
  }
  // A fetch cut short that Redis runs later leaves the jobs it reserved with no one to run them;
  // the node rides out a frozen Redis with its stall detection and its lease instead.
  if (typeof broker !== 'string' && broker.commandTimeoutMs !== undefined)
    throw new OptionError(
      'broker',
      broker.displayUrl,
      "a broker without commandTimeout: a Worker's fetches, settlements and heartbeats must wait for Redis's reply, not be cut short (give the Worker a broker of its own)",
    );
  // Ignored beside a broker object, each would leave the node on the object's own (another namespace: no job seen).
  if (typeof broker !== 'string')
    for (const option of ['namespace', 'resultTtl', 'lease', 'leaseMs'] as const)
      if (input[option] !== undefined)
        throw new OptionError(
          option,
          input[option],
          `no ${option} with a broker object: give it to createBroker(url, { ${option === 'lease' ? 'leaseMs' : option} })`,
        );
  const queues = parseQueues(input.queues ?? 'default');
  const weighted = queues.some((q) => q.weight !== 1);
  const queueOrder = input.queueOrder ?? (weighted ? 'weighted' : 'round-robin');
  if (!QUEUE_ORDERS.includes(queueOrder))
    throw new OptionError('queueOrder', input.queueOrder, QUEUE_ORDERS.join(' | '));
  // Both reach the broker's scripts as arguments (the fetch's count, the recovery's limit): bounded here, not refused there.
  const prefetchMultiplier =
    input.prefetchMultiplier === undefined
      ? undefined
      : checkInteger('prefetchMultiplier', input.prefetchMultiplier, throwOptionError, 1, PREFETCH_MAX);
  const maxRedeliveries =
    input.maxRedeliveries === undefined
      ? 5
      : checkInteger('maxRedeliveries', input.maxRedeliveries, throwOptionError, 0);
  const jobLogLevel = input.jobLogLevel ?? 'info';
  if (!JOB_LOG_LEVELS.includes(jobLogLevel))
    throw new OptionError('jobLogLevel', input.jobLogLevel, JOB_LOG_LEVELS.join(' | '));
  const name = input.name ?? `${process.pid}@${hostname()}`;
  if (typeof name !== 'string' || name.length === 0) throw new OptionError('name', input.name, 'a non-empty string');
  if (input.autoscale !== undefined && parseAutoscale(input.autoscale) === undefined)
    throw new OptionError('autoscale', input.autoscale, AUTOSCALE_EXPECTED);
  if (input.schedule !== undefined && !isSchedule(input.schedule))
    throw new OptionError('schedule', input.schedule, 'a schedule made by defineSchedule({...})');
  const pool: PoolOptions = { ...(input.pool ?? {}), app: input.app };
  // Checked here too, so the error names the Worker's option, not the Pool's `processes`.
  if (input.concurrency !== undefined)
    pool.processes = checkInteger('concurrency', input.concurrency, throwOptionError, 1, MAX_PROCESSES);
  if (input.maxConcurrency !== undefined) pool.maxProcesses = checkMaxConcurrency(input);
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
    namespace:
      input.namespace === undefined ? undefined : checkNamespace('namespace', input.namespace, throwOptionError),
    resultTtl: optionalDuration('resultTtl', input.resultTtl, 'expiry'),
    leaseMs: lease(input),
    pool,
    logger: input.logger,
    events: events(input.events),
    ...endpoints(input),
    schedule: input.schedule,
  };
}

function events(value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new OptionError('events', value, 'true or false');
  return value ?? true;
}

/** The metrics and health addresses: a port of 0..65535, a host; one port serving both needs one host. */
function endpoints(input: WorkerOptions): { metrics: Endpoint | undefined; health: Endpoint | undefined } {
  const metrics = endpoint(input.metricsPort, input.metricsHost, 'metricsPort', 'metricsHost');
  const health = endpoint(input.healthPort, input.healthHost, 'healthPort', 'healthHost');
  if (metrics !== undefined && health !== undefined && metrics.port === health.port && metrics.port !== 0) {
    if (metrics.host !== health.host)
      throw new OptionError(
        'healthHost',
        input.healthHost,
        `the metricsHost (${metrics.host}) when healthPort equals metricsPort: one port serves both`,
      );
  }
  return { metrics, health };
}

function endpoint(port: unknown, host: unknown, portName: string, hostName: string): Endpoint | undefined {
  if (port === undefined) {
    if (host !== undefined) throw new OptionError(hostName, host, `to be left out without ${portName}`);
    return undefined;
  }
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new OptionError(portName, port, 'a port number, an integer from 0 to 65535 (0: any free port)');
  if (host !== undefined && (typeof host !== 'string' || host.length === 0))
    throw new OptionError(hostName, host, 'a host name or address');
  return { host: host ?? DEFAULT_ENDPOINT_HOST, port };
}

/** `lease`, or its old name `leaseMs`; heartbeats are timers of a fraction of it (checkLease: 1 s to 2^31-1 ms). */
function lease(input: WorkerOptions): number | undefined {
  if (input.lease !== undefined && input.leaseMs !== undefined)
    throw new OptionError('leaseMs', input.leaseMs, 'to be left out when lease is given (leaseMs is its old name)');
  if (input.lease !== undefined) return checkLease('lease', input.lease, throwOptionError);
  return input.leaseMs === undefined ? undefined : checkLease('leaseMs', input.leaseMs, throwOptionError);
}

/** The Pool checks maxProcesses against processes and autoscale too, but would name its own options. */
function checkMaxConcurrency(input: WorkerOptions): number {
  const max = checkInteger('maxConcurrency', input.maxConcurrency, throwOptionError, 1, MAX_PROCESSES);
  if (input.autoscale === undefined && input.concurrency !== undefined && input.concurrency > max)
    throw new OptionError('concurrency', input.concurrency, `at most maxConcurrency (${max})`);
  const autoscaleMax = input.autoscale === undefined ? undefined : parseAutoscale(input.autoscale)?.[0];
  if (autoscaleMax !== undefined && autoscaleMax > max)
    throw new OptionError('autoscale', input.autoscale, `a max of at most maxConcurrency (${max})`);
  return max;
}
