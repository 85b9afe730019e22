import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { brokerOption, brokerUrlOf, namespaceOf, namespaceOption } from '../broker-flags.js';
import { createCliLogger, setDefaultLogger } from '../../logger.js';
import type { Worker } from '../../worker.js';
import { AppLoadError, OptionError, PoolFailedError, WorkerStoppedError, messageOf } from '../../errors.js';
import { asFlagError, checkLimitFlags } from '../flag-names.js';
import * as parse from '../parsers.js';
import { takeHeldSignals } from '../held-signals.js';
import { onPoolSignals, onStopSignals } from '../signals.js';
import { UsageError } from '../usage-error.js';
import type { Schedule } from '../../schedule/define.js';
import { oneLine } from '../../util/one-line.js';

/** How long a cold shutdown may take before the process exits regardless. */
const COLD_EXIT_MS = 10_000;

interface WorkerFlags {
  app: string;
  broker?: string;
  namespace?: string;
  lease?: number;
  resultTtl?: number;
  concurrency?: number;
  maxConcurrency?: number;
  autoscale?: string;
  strategy: 'fair' | 'fcfs';
  queues: string;
  queueOrder?: 'round-robin' | 'weighted' | 'strict';
  prefetchMultiplier?: number;
  maxTasksPerChild?: number;
  maxMemoryPerChild?: number;
  timeLimit?: number;
  softTimeLimit?: number;
  name?: string;
  logLevel: string;
  jobLogLevel: 'info' | 'debug';
  nodeArg: string[];
  maxRedeliveries?: number;
  trackStarted?: boolean;
  events: boolean;
  metricsPort?: number;
  metricsHost?: string;
  healthPort?: number;
  healthHost?: string;
  schedule?: string;
}

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('start a worker node: fetch jobs from the broker and run them in a pool of child processes')
    .requiredOption('-A, --app <module>', 'task module (its default export is defineTasks({...}))')
    .addOption(brokerOption())
    .addOption(namespaceOption())
    .option(
      '--lease <duration>',
      'how long a silent node keeps its jobs before another node recovers them, at least 1s (default: 20s)',
      parse.lease,
    )
    .option(
      '--result-ttl <duration>',
      'how long results are kept, unless a job says otherwise (default: 1d)',
      parse.resultTtl,
    )
    .option('-c, --concurrency <n>', 'number of child processes (default: CPUs)', parse.processCount)
    .option(
      '--max-concurrency <n>',
      'the most child processes `control grow` may reach (default: 4 x CPUs)',
      parse.processCount,
    )
    .option(
      '--autoscale <max,min>',
      'grow and shrink the pool between MAX and MIN from the reserved jobs',
      parse.autoscale,
    )
    .option(
      '-O, --strategy <name>',
      'scheduling: fair (a long job never holds a short one) or fcfs',
      parse.strategy,
      'fair',
    )
    .option('-Q, --queues <list>', 'queues to consume, name[:weight],...', parse.queues, 'default')
    .option(
      '--queue-order <order>',
      'round-robin, weighted or strict (default: weighted if a queue has a weight other than 1, else round-robin)',
      parse.queueOrder,
    )
    .option(
      '--prefetch-multiplier <n>',
      'jobs held per process, buffered + running, up to 1024 (default: sized by the node)',
      parse.prefetchMultiplier,
    )
    .option('--max-tasks-per-child <n>', 'replace a child after this many jobs', parse.positiveInt)
    .option(
      '--max-memory-per-child <size>',
      'replace a child whose RSS after a job is above this (bytes, or 512MB, 1GiB)',
      parse.size,
    )
    .option('--time-limit <duration>', 'hard limit per job (e.g. 5m, 300ms): the child is killed', parse.timeLimit)
    .option(
      '--soft-time-limit <duration>',
      "soft limit per job (e.g. 4m): the job's AbortSignal fires",
      parse.timeLimit,
    )
    .option(
      '--max-redeliveries <n>',
      'a job redelivered more often than this is a poison job (dead set)',
      parse.nonNegativeInt,
    )
    .option('--track-started', 'also record RECEIVED and STARTED states')
    .option(
      '--node-arg <flag>',
      'a node flag for the children, repeatable: --node-arg=--import=tsx runs a TypeScript task module',
      parse.nodeArg,
      [],
    )
    .option('--schedule <module>', 'periodic tasks: a module whose default export is defineSchedule({...})')
    .option('-n, --name <name>', 'node name (default <pid>@<hostname>)')
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent', parse.logLevel, 'info')
    .option(
      '--job-log-level <level>',
      'level of the per-job lines (received, succeeded): info, or debug on a busy node',
      parse.jobLogLevel,
      'info',
    )
    .option('--no-events', 'write no events to the broker (prefork events shows none from this node)')
    .option('--metrics-port <port>', 'serve Prometheus metrics at /metrics on this port', parse.port)
    .option('--metrics-host <host>', 'address for --metrics-port (default 0.0.0.0)')
    .option('--health-port <port>', 'serve /healthz and /readyz on this port (may equal --metrics-port)', parse.port)
    .option('--health-host <host>', 'address for --health-port (default 0.0.0.0)')
    .action((flags: WorkerFlags) => runWorker(flags));
}

async function runWorker(flags: WorkerFlags): Promise<void> {
  const app = resolve(flags.app);
  if (!existsSync(app))
    throw new UsageError(`option '-A, --app <module>' argument '${flags.app}' is invalid. no such file: ${app}`);
  if (flags.concurrency !== undefined && flags.autoscale !== undefined)
    throw new UsageError(
      'give -c/--concurrency or --autoscale, not both: with --autoscale the pool sizes itself between MAX and MIN',
    );
  checkLimitFlags(flags.timeLimit, flags.softTimeLimit);
  const namespace = namespaceOf(flags);
  const schedule = flags.schedule === undefined ? undefined : await loadSchedule(flags.schedule);
  const log = createCliLogger(flags.logLevel);
  setDefaultLogger(log);
  const broker = brokerUrlOf(flags);
  // Loaded here: the one-shot commands never need the Worker, its pool and its consumer.
  const { Worker } = await import('../../worker.js');
  let worker: Worker;
  try {
    worker = new Worker({
      app,
      broker,
      namespace,
      lease: flags.lease,
      resultTtl: flags.resultTtl,
      concurrency: flags.concurrency,
      maxConcurrency: flags.maxConcurrency,
      autoscale: flags.autoscale,
      strategy: flags.strategy,
      queues: flags.queues,
      queueOrder: flags.queueOrder,
      prefetchMultiplier: flags.prefetchMultiplier,
      maxTasksPerChild: flags.maxTasksPerChild,
      maxMemoryPerChild: flags.maxMemoryPerChild,
      timeLimit: flags.timeLimit,
      softTimeLimit: flags.softTimeLimit,
      name: flags.name,
      maxRedeliveries: flags.maxRedeliveries,
      trackStarted: flags.trackStarted,
      jobLogLevel: flags.jobLogLevel,
      events: flags.events,
      metricsPort: flags.metricsPort,
      metricsHost: flags.metricsHost,
      healthPort: flags.healthPort,
      healthHost: flags.healthHost,
      pool: flags.nodeArg.length > 0 ? { execArgv: flags.nodeArg } : undefined,
      logger: log,
      schedule,
    });
  } catch (err) {
    throw err instanceof OptionError ? asFlagError(err) : new UsageError(messageOf(err));
  }
  // A reader that went away (`| head`) must not take the node down: the banner is lost, the work goes on (pino stops writing on EPIPE).
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') log.error({ err }, 'cannot write to stdout');
  });
  const pool = worker.pool.options;
  const size = pool.autoscale
    ? `autoscale ${pool.autoscale.max},${pool.autoscale.min}`
    : `concurrency ${pool.processes}`;
  const queues = worker.options.queues.map((q) => (q.weight === 1 ? q.name : `${q.name}:${q.weight}`)).join(',');
  process.stdout.write(
    oneLine(
      `prefork worker ${worker.name} (pid ${process.pid}) · broker ${worker.broker.displayUrl}${namespace === undefined ? '' : ` · namespace ${namespace}`} · queues ${queues} (${worker.options.queueOrder}) · ${size} · ${pool.strategy}`,
    ) + '\n',
  );
  let stopAsked = false;
  onPoolSignals(worker, log, () => stopAsked);
  const onStop = onStopSignals(log, (mode) => {
    stopAsked = true;
    if (mode === 'cold') {
      // A cold stop must end even if the broker is unreachable: what is unsettled stays reserved
      // in the broker and comes back when this node's lease expires (at least once).
      setTimeout(() => {
        log.error(
          { unacked: worker.stats().unacked },
          `cold shutdown did not finish within ${COLD_EXIT_MS} ms; exiting`,
        );
        process.exit(1);
      }, COLD_EXIT_MS).unref();
    }
    // A pool that fails during the stop ('failed' comes after this) still makes the exit non-zero.
    worker.stop({ cold: mode === 'cold' }).then(
      () => process.exit(worker.failed === undefined ? 0 : 1),
      (err: unknown) => {
        log.fatal({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
  // Signals that came while the CLI loaded (held by main.ts), now that the handlers above are in place.
  for (const signal of takeHeldSignals()) {
    if (signal === 'SIGTERM' || signal === 'SIGINT' || signal === 'SIGQUIT') onStop(signal);
    else log.info({ signal }, `${signal} before the worker started: nothing to do (no child runs yet)`);
  }
  // The pool failed after start: the worker has already stopped and given its jobs back.
  worker.once('failed', (err) => {
    log.fatal({ err }, `worker stopped: ${err.message}`);
    process.exit(1);
  });
  // A stop asked by `prefork control shutdown` ends the process as a signal's does
  // (after a failed start or a failed pool, the paths above and below exit 1).
  let started = false;
  worker.once('stopped', () => {
    if (started && worker.failed === undefined) process.exit(0);
  });
  try {
    await worker.start();
    started = true;
    // A stop during start() (the broker not answering yet) ends it too: no tasks line after "worker stopping".
    if (!stopAsked) process.stdout.write(`${tasksLine(worker.pool.taskNames)}\n`);
  } catch (err) {
    // A stop signal came while it started: the stop it asked for exits (0), as for a node that ran.
    if (err instanceof WorkerStoppedError && stopAsked) return;
    // A task module that does not load: the pool has logged it once, with its file, line and column.
    if (err instanceof PoolFailedError && err.cause instanceof AppLoadError && log.isLevelEnabled('error'))
      log.fatal({ app }, 'worker failed to start: its task module does not load (the error above says where)');
    else log.fatal({ err }, `worker failed to start: ${messageOf(err)}`);
    await worker.stop({ cold: true }).catch(() => undefined);
    process.exit(1);
  }
}

/**
 * The `--schedule` module's default export, loaded in the node's own process
 * (it declares data: no task runs here). What is wrong with it, a bad entry
 * included (defineSchedule names it), is a usage error: exit 2.
 */
async function loadSchedule(path: string): Promise<Schedule> {
  const file = resolve(path);
  const flag = `option '--schedule <module>' argument '${path}' is invalid.`;
  if (!existsSync(file)) throw new UsageError(`${flag} no such file: ${file}`);
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (err) {
    throw new UsageError(`${flag} ${messageOf(err)}`);
  }
  const { isSchedule } = await import('../../schedule/define.js');
  if (!isSchedule(loaded.default))
    throw new UsageError(`${flag} its default export is not defineSchedule({...}) (import it from 'prefork')`);
  return loaded.default;
}

/**
 * The banner's second line, once a child has loaded the task module
 * (Celery's [tasks] list). A name is the module's to choose: one with a
 * newline or an escape sequence must not break the line nor drive the terminal.
 */
function tasksLine(names: readonly string[]): string {
  return names.length === 0
    ? 'tasks: none (the task module registers no task)'
    : `tasks (${names.length}): ${[...names].sort().map(oneLine).join(', ')}`;
}
