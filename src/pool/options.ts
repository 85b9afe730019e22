import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import { OptionError } from '../errors.js';
import { checkKnownKeys, throwOptionError } from '../job-option-checks.js';
import {
  AUTOSCALE_EXPECTED,
  checkDuration,
  checkInteger,
  checkSize,
  MAX_PROCESSES,
  parseAutoscale,
  type DurationKind,
} from '../util/units.js';
import { DEFAULT_MAX_FRAME_SIZE, MAX_FRAME_SIZE } from '../protocol/job-frame.js';

/**
 * How the TaskHandler picks a child for the next job: `'fair'` never lets a
 * long job hold a short one (a child holds short jobs ahead only while they
 * would not run sooner elsewhere: docs/architecture.md, "Fair"); `'fcfs'`
 * queues jobs in busy children's pipes, where they stay.
 */
export type StrategyName = 'fair' | 'fcfs';

/**
 * What `new Pool(options)` accepts; a bad or unknown option throws an
 * OptionError naming it. Durations are ms or strings like "30s"; sizes are
 * bytes or strings like "512MB" (10^6) or "512MiB" (2^20).
 */
export interface PoolOptions {
  /** Path of the task module (its default export is `defineTasks({...})`). */
  app: string;
  /**
   * Fixed number of children (at most 4096). Ignored when `autoscale` is set.
   * @defaultValue the number of CPUs (`os.availableParallelism()`), or `maxProcesses` if smaller
   */
  processes?: number;
  /**
   * `[max, min]` or "max,min": size the pool between min and max children
   * from the reserved requests (jobs applied and not yet settled); max at most 4096.
   * With min 0 the pool still starts one child, which learns the task
   * module's tasks and is retired after `keepalive` if no job comes.
   * @defaultValue none: a fixed pool of `processes` children
   */
  autoscale?: [number, number] | string;
  /**
   * The most children the pool may have: grow() stops there, and neither
   * `processes` nor autoscale's max may exceed it. A bound for run-time
   * growth (`prefork control grow 30`), which also spawns in steps. At most 4096.
   * @defaultValue 4 × the number of CPUs (at most 4096), or `processes` / autoscale's max if larger
   */
  maxProcesses?: number;
  /**
   * With autoscale: how long after the last scale-up before the Autoscaler
   * may shrink the pool (ms or "30s").
   * @defaultValue 30 s
   */
  keepalive?: number | string;
  /**
   * With autoscale: how often the Autoscaler re-evaluates the size (ms or "1s").
   * @defaultValue 1 s
   */
  autoscaleInterval?: number | string;
  /**
   * 'fair': a job goes to an idle child, or waits for one: a child may hold
   * a few short jobs ahead (about 4 ms of them), taken back through its
   * claim pipe when another child is idle (once they are worth 1 ms, or the
   * job in front has run 1 ms) or the job in front runs 10 ms. 'fcfs': idle children first (lowest index), then round-robin to
   * any child whose pipe accepts data; jobs stay where they were written.
   * @defaultValue `'fair'`
   */
  strategy?: StrategyName;
  /**
   * Replace a child after it has run this many jobs (a leak guard).
   * @defaultValue none: a child runs jobs for as long as it lives
   */
  maxTasksPerChild?: number;
  /**
   * Replace a child once its resident set size after a job is above this
   * (bytes or "512MB"; a bare number is bytes, where Celery's option counts
   * KiB); the job itself completes, and the jobs written to the child ahead
   * of it run on other children. A limit below a child's RSS once it is up
   * (every child would go after each job) is logged as a warning at start.
   * @defaultValue none: no memory limit
   */
  maxMemoryPerChild?: number | string;
  /**
   * Hard limit per job (ms or "30s", at most 2^31-1 ms): past it the child
   * is SIGKILLed and the job fails with TimeLimitExceeded. A task's or a
   * job's own limit wins over this one.
   * @defaultValue none: jobs may run for ever
   */
  timeLimit?: number | string;
  /**
   * Soft limit per job (ms or "30s", less than `timeLimit`): past it the
   * job's AbortSignal (`currentTask().signal`) aborts with SoftTimeLimitExceeded.
   * A task's or a job's own limit wins over this one.
   * @defaultValue none
   */
  softTimeLimit?: number | string;
  /**
   * A child that has not loaded the task module and reported ready within
   * this (ms or "10s") is killed and replaced.
   * @defaultValue 10 s
   */
  procAliveTimeout?: number | string;
  /**
   * Children that die before becoming ready, or while idle before settling
   * any job, more than this many times within `restartWindow`, or in a row
   * with no child becoming ready in between (however slowly: a module that
   * hangs as it loads, each child killed after `procAliveTimeout`), fail the
   * pool (PoolFailedError). A child that did work and dies idle is replaced
   * without counting (its replacements cannot loop faster than jobs run).
   * @defaultValue 10
   */
  maxRestarts?: number;
  /**
   * The sliding window `maxRestarts` counts deaths in (ms or "30s").
   * @defaultValue 30 s
   */
  restartWindow?: number | string;
  /**
   * Largest frame, in bytes (or "64MiB"), exchanged with a child: a job
   * whose arguments exceed it fails with ArgumentSerializationError, one
   * whose result does with ResultSerializationError. At most 2^32-1 bytes:
   * a frame's length travels in 4 bytes.
   * @defaultValue 64 MiB
   */
  maxFrameSize?: number | string;
  /**
   * The node binary the children run.
   * @defaultValue the parent's, `process.execPath`
   */
  execPath?: string;
  /**
   * Node flags for the children (e.g. `['--max-old-space-size=512']`).
   * @defaultValue `[]`
   */
  execArgv?: string[];
  /**
   * Environment variables for the children, over the parent's `process.env`.
   * @defaultValue `{}`: the parent's environment as is
   */
  env?: Record<string, string>;
  /**
   * How long close() waits for children told to exit (once every job has
   * settled) before it SIGKILLs them. terminate() SIGKILLs at once: children
   * ignore SIGTERM, which may come from the whole process group.
   * @defaultValue 2 s
   */
  killTimeout?: number | string;
  /**
   * A pino logger; the pool logs through a child of it.
   * @defaultValue pino on stdout at `info` (`$PREFORK_LOG_LEVEL` overrides), or the CLI's logger
   */
  logger?: Logger;
}

/** Options after validation, with defaults applied and units resolved. */
export interface ResolvedPoolOptions {
  app: string;
  processes: number;
  autoscale: { max: number; min: number } | undefined;
  maxProcesses: number;
  keepalive: number;
  autoscaleInterval: number;
  strategy: StrategyName;
  maxTasksPerChild: number | undefined;
  maxMemoryPerChild: number | undefined;
  timeLimit: number | undefined;
  softTimeLimit: number | undefined;
  procAliveTimeout: number;
  maxRestarts: number;
  restartWindow: number;
  maxFrameSize: number;
  execPath: string;
  execArgv: string[];
  env: Record<string, string>;
  killTimeout: number;
  logger: Logger | undefined;
}

const KNOWN = new Set<string>([
  'app',
  'processes',
  'autoscale',
  'maxProcesses',
  'keepalive',
  'autoscaleInterval',
  'strategy',
  'maxTasksPerChild',
  'maxMemoryPerChild',
  'timeLimit',
  'softTimeLimit',
  'procAliveTimeout',
  'maxRestarts',
  'restartWindow',
  'maxFrameSize',
  'execPath',
  'execArgv',
  'env',
  'killTimeout',
  'logger',
]);

export const POOL_DEFAULTS = {
  keepalive: 30_000,
  autoscaleInterval: 1_000,
  strategy: 'fair' as StrategyName,
  procAliveTimeout: 10_000,
  maxRestarts: 10,
  restartWindow: 30_000,
  maxFrameSize: DEFAULT_MAX_FRAME_SIZE,
  killTimeout: 2_000,
};

/** One validation pass: every error names the option and the value; unknown options are rejected. */
export function resolvePoolOptions(input: PoolOptions): ResolvedPoolOptions {
  if (typeof input !== 'object' || input === null) throw new OptionError('options', input, 'an object');
  checkKnownKeys(input, KNOWN, 'Pool option', throwOptionError);
  if (typeof input.app !== 'string' || input.app.length === 0)
    throw new OptionError('app', input.app, 'the path of a task module');
  const autoscale = input.autoscale === undefined ? undefined : parseAutoscale(input.autoscale);
  if (input.autoscale !== undefined && autoscale === undefined)
    throw new OptionError('autoscale', input.autoscale, AUTOSCALE_EXPECTED);
  const cap = optionalInteger('maxProcesses', input.maxProcesses, 1, MAX_PROCESSES);
  const processes =
    input.processes === undefined
      ? Math.min(availableParallelism(), cap ?? MAX_PROCESSES)
      : checkInteger('processes', input.processes, throwOptionError, 1, MAX_PROCESSES);
  const maxProcesses = resolveMaxProcesses(cap, input, processes, autoscale?.[0]);
  const strategy = input.strategy ?? POOL_DEFAULTS.strategy;
  if (strategy !== 'fair' && strategy !== 'fcfs') throw new OptionError('strategy', input.strategy, '"fair" or "fcfs"');
  const timeLimit = optionalDuration('timeLimit', input.timeLimit, 'timer');
  const softTimeLimit = optionalDuration('softTimeLimit', input.softTimeLimit, 'timer');
  if (timeLimit !== undefined && softTimeLimit !== undefined && softTimeLimit >= timeLimit) {
    throw new OptionError('softTimeLimit', input.softTimeLimit, `less than timeLimit (${timeLimit} ms)`);
  }
  if (input.execPath !== undefined && (typeof input.execPath !== 'string' || input.execPath.length === 0)) {
    throw new OptionError('execPath', input.execPath, 'the path of a node binary');
  }
  if (
    input.execArgv !== undefined &&
    (!Array.isArray(input.execArgv) || input.execArgv.some((a) => typeof a !== 'string'))
  ) {
    throw new OptionError('execArgv', input.execArgv, 'an array of strings');
  }
  if (input.env !== undefined && (typeof input.env !== 'object' || input.env === null))
    throw new OptionError('env', input.env, 'an object of strings');
  if (input.logger !== undefined && typeof input.logger?.child !== 'function')
    throw new OptionError('logger', '[object]', 'a pino logger');
  return {
    app: input.app,
    processes,
    autoscale: autoscale && { max: autoscale[0], min: autoscale[1] },
    maxProcesses,
    // keepalive is compared with Date.now(), never waited on: any length is fine.
    keepalive: optionalDuration('keepalive', input.keepalive, 'any') ?? POOL_DEFAULTS.keepalive,
    autoscaleInterval:
      optionalDuration('autoscaleInterval', input.autoscaleInterval, 'timer') ?? POOL_DEFAULTS.autoscaleInterval,
    strategy,
    maxTasksPerChild: optionalInteger('maxTasksPerChild', input.maxTasksPerChild, 1),
    maxMemoryPerChild: optionalSize('maxMemoryPerChild', input.maxMemoryPerChild),
    timeLimit,
    softTimeLimit,
    procAliveTimeout:
      optionalDuration('procAliveTimeout', input.procAliveTimeout, 'timer') ?? POOL_DEFAULTS.procAliveTimeout,
    maxRestarts: optionalInteger('maxRestarts', input.maxRestarts, 1) ?? POOL_DEFAULTS.maxRestarts,
    // A sliding window over timestamps, never a timer.
    restartWindow: optionalDuration('restartWindow', input.restartWindow, 'positive') ?? POOL_DEFAULTS.restartWindow,
    maxFrameSize: optionalSize('maxFrameSize', input.maxFrameSize, MAX_FRAME_SIZE) ?? POOL_DEFAULTS.maxFrameSize,
    execPath: input.execPath ?? process.execPath,
    execArgv: input.execArgv ?? [],
    env: input.env ?? {},
    killTimeout: optionalDuration('killTimeout', input.killTimeout, 'wait') ?? POOL_DEFAULTS.killTimeout,
    logger: input.logger,
  };
}

/** The default growth bound per CPU. */
export const MAX_PROCESSES_PER_CPU = 4;

/** maxProcesses: given, it bounds `processes` and autoscale's max; by default it makes room for them. */
function resolveMaxProcesses(
  cap: number | undefined,
  input: PoolOptions,
  processes: number,
  autoscaleMax: number | undefined,
): number {
  if (cap === undefined)
    return Math.max(Math.min(MAX_PROCESSES, MAX_PROCESSES_PER_CPU * availableParallelism()), autoscaleMax ?? processes);
  if (autoscaleMax !== undefined && autoscaleMax > cap)
    throw new OptionError('autoscale', input.autoscale, `a max of at most maxProcesses (${cap})`);
  if (autoscaleMax === undefined && processes > cap)
    throw new OptionError('processes', input.processes, `at most maxProcesses (${cap})`);
  return cap;
}

/** A duration option of `kind` (see DurationKind) in ms, or undefined when not given. */
export function optionalDuration(name: string, value: unknown, kind: DurationKind): number | undefined {
  return value === undefined ? undefined : checkDuration(name, value, kind, throwOptionError);
}

function optionalSize(name: string, value: unknown, max?: number): number | undefined {
  return value === undefined ? undefined : checkSize(name, value, throwOptionError, max);
}

function optionalInteger(name: string, value: number | undefined, min: number, max?: number): number | undefined {
  return value === undefined ? undefined : checkInteger(name, value, throwOptionError, min, max);
}
