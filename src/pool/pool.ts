import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import {
  AppLoadError,
  InvalidStateError,
  JobWithdrawnError,
  OptionError,
  PoolClosedError,
  PoolFailedError,
  messageOf,
  ProtocolError,
  TimeLimitExceeded,
  WorkerLostError,
} from '../errors.js';
import { defaultLogger } from '../logger.js';
import { AUTOSCALE_EXPECTED, integerRange, parseAutoscale } from '../util/units.js';
import type { SerializedError, TaskOptions } from '../job-types.js';
import type { ArgsThenOptions, TaskArgs, TaskName, TaskResult } from '../task-types.js';
import type { TaskRegistry } from '../tasks.js';
import { MessageType, type ChildMessage, type JobMeta } from '../protocol/messages.js';
import { serializeError } from '../protocol/error-codec.js';
import { createStrategy } from '../scheduling/index.js';
import { Autoscaler, type ScaleEvent } from './autoscaler.js';
import { resolveApplyOptions } from './apply-options.js';
import { listJobs, type PoolJobs } from './job-list.js';
import { PoolJob, type ApplyOptions, type JobArgs, type ResolvedApplyOptions } from './job.js';
import { resolvePoolOptions, type PoolOptions, type ResolvedPoolOptions } from './options.js';
import { ResultHandler } from './result-handler.js';
import { exitReason, type ExitReason } from './exit-reason.js';
import { collectStats, type PoolStats, type PoolTotals } from './stats.js';
import { Supervisor } from './supervisor.js';
import { TaskHandler } from './task-handler.js';
import { StartWatch } from './start-watch.js';
import { RollingReload } from './rolling-reload.js';
import { TimeoutHandler } from './timeout-handler.js';
import { IdleTrim } from './idle-trim.js';
import type { ProcessOwner, WorkerProcess } from './worker-process.js';

/** A child loaded the task module and is ready for jobs: the Pool's 'process-up' event. */
export interface ProcessUpEvent {
  /** The child's process id. */
  pid: number;
}

/** A child exited: the Pool's 'process-down' event. */
export interface ProcessDownEvent {
  /** The child's process id. */
  pid: number;
  /** Its exit code, or null when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended it, or null. */
  signal: NodeJS.Signals | null;
  /**
   * True when the pool ended it: asked it to exit (retired, shrunk, closing)
   * and it did cleanly, or killed it (time limit, terminate()). False when it
   * died on its own or broke the pipe protocol.
   */
  expected: boolean;
  /** Why it exited (a bounded set: metrics count exits by it). */
  reason: ExitReason;
}

/** A job whose child died under it: the Pool's 'job-lost' event (the job's promise rejects with `error`). */
export interface JobLostEvent {
  /** The job's id (ApplyOptions.id, else the pool's sequence number). */
  id: string;
  /** The task's name. */
  name: string;
  /** The process id of the child that died. */
  pid: number;
  /** TimeLimitExceeded when the hard time limit killed the child, else WorkerLostError. */
  error: WorkerLostError | TimeLimitExceeded;
}

/** An autoscaling pool's bounds (`Pool.autoscaleBounds`). */
export interface AutoscaleBounds {
  /** The most children. */
  max: number;
  /** The fewest children. */
  min: number;
}

/** The pool's size or autoscale bounds were changed by grow(), shrink() or setAutoscale(): the Pool's 'resize' event. */
export interface ResizeEvent {
  /** The number of children the pool keeps now (`Pool.size`). */
  processes: number;
  /** The autoscale bounds now, or undefined for a fixed pool. */
  autoscale: AutoscaleBounds | undefined;
}

/** What `Pool.cancel` found of a job id. */
export interface CancelledJobs {
  /** Jobs not started: they never run. */
  unstarted: number;
  /** Jobs running: stopped with `terminate`, else left to run on. */
  running: number;
}

/** The Pool's events and their arguments: `pool.on('process-down', (event) => ...)`. */
export interface PoolEvents {
  /** A child is ready for jobs. */
  'process-up': [ProcessUpEvent];
  /** A child exited, by request or not. */
  'process-down': [ProcessDownEvent];
  /** A job's child died under it (not emitted for jobs cut off by terminate()). */
  'job-lost': [JobLostEvent];
  /** The Autoscaler changed the number of children. */
  autoscale: [ScaleEvent];
  /** grow(), shrink() or setAutoscale() changed the size or the bounds (the Autoscaler's own moves are 'autoscale'). */
  resize: [ResizeEvent];
  /** Children kept dying before they could work: the pool failed and rejects every job. */
  failed: [PoolFailedError];
}

/**
 * The pool's lifecycle.
 * - created: constructed; apply() buffers jobs until start().
 * - running: children are kept alive and fed.
 * - closing: close() was called; jobs already applied still run, new ones are refused.
 * - closed: every child has exited (after close or terminate).
 * - failed: children kept dying before they could work; every job is rejected.
 */
type PoolState = 'created' | 'running' | 'closing' | 'closed' | 'failed';

/**
 * Celery's AsynPool for Node: owns the children and the four handlers
 * (TaskHandler, ResultHandler, Supervisor, TimeoutHandler) plus the optional
 * Autoscaler, and knows nothing of Redis. Use it alone to run tasks in child
 * processes of this one; a Worker feeds one from a broker.
 * @template R the task module's type (`new Pool<typeof tasks>(...)`): `apply`
 * then checks task names and arguments and types the result
 */
export class Pool<R extends TaskRegistry = TaskRegistry> extends EventEmitter<PoolEvents> {
  /** The options as validated: defaults applied, durations in ms and sizes in bytes. */
  readonly options: ResolvedPoolOptions;
  private readonly log: Logger;
  private readonly supervisor: Supervisor;
  private readonly tasks: TaskHandler;
  private readonly results: ResultHandler;
  private readonly timeouts: TimeoutHandler;
  private readonly startWatch: StartWatch;
  private readonly reloader: RollingReload;
  private readonly idleTrim = new IdleTrim(
    () => this.totals.applied,
    () => this.pending > 0,
  );
  /** Children whose head job changed while their frames were read: looked at once the chunk is done. */
  private readonly newHeads = new Set<WorkerProcess>();
  private readonly autoscaler: Autoscaler | undefined;
  private state: PoolState = 'created';
  /** checkMemoryLimit has compared the limit with a child's RSS (once per pool). */
  private memoryLimitChecked = false;
  private seq = 0;
  private pending = 0;
  private readonly totals: PoolTotals = { applied: 0, done: 0, failed: 0, lost: 0, restarts: 0 };
  private failure: PoolFailedError | undefined;
  private startWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  private closeWaiters: (() => void)[] = [];
  private terminating = false;
  /** Task names and per-task options, as the latest child reported them in WORKER_UP. */
  private registered: string[] = [];
  private taskDefaults: ReadonlyMap<string, TaskOptions> = new Map();
  private dispatchGate: () => boolean = () => true;
  /** Children that reported a load error (their death is that error, logged once), and the errors logged. */
  private readonly failedToLoad = new WeakSet<WorkerProcess>();
  private readonly loadErrorsLogged = new Set<string>();

  /** Validates the options (OptionError names a bad one); no child is spawned before start(). */
  constructor(options: PoolOptions) {
    super();
    this.options = resolvePoolOptions(options);
    const o = this.options;
    this.log = (o.logger ?? defaultLogger()).child({ component: 'pool' });
    const owner: ProcessOwner = {
      onMessage: (proc, msg) => this.onMessage(proc, msg),
      onChunkDone: (proc) => {
        if (this.newHeads.delete(proc)) this.onNewHead(proc, false);
        this.tasks.flush();
      },
      onProtocolError: (proc, err) => this.supervisor.onProtocolError(proc, err),
      onDrain: () => this.tasks.schedule(),
      onExit: (proc, code, signal) => this.supervisor.onExit(proc, code, signal),
    };
    const strategy = createStrategy(o.strategy);
    this.supervisor = new Supervisor(
      {
        spawn: {
          config: {
            app: o.app,
            maxFrameSize: o.maxFrameSize,
            reportMemory: o.maxMemoryPerChild !== undefined,
            memoryLimit: o.maxMemoryPerChild,
            parentPid: process.pid,
          },
          execPath: o.execPath,
          execArgv: o.execArgv,
          env: o.env,
          claims: strategy.takesBack,
        },
        procAliveTimeout: o.procAliveTimeout,
        maxRestarts: o.maxRestarts,
        restartWindow: o.restartWindow,
      },
      owner,
      {
        onJobsOrphaned: (proc, started, unstarted, error) => this.onJobsOrphaned(proc, started, unstarted, error),
        onProcessUp: (proc) => this.onProcessUp(proc),
        onProcessDown: (proc, exitCode, signal, expected) => this.onProcessDown(proc, exitCode, signal, expected),
        onFatal: (err) => this.fail(err),
      },
      this.log,
    );
    this.tasks = new TaskHandler(strategy, o.maxTasksPerChild, o.maxFrameSize, {
      children: () => this.supervisor.procs,
      onQuota: (proc) => this.supervisor.retire(proc),
      onUnsendable: (job, err) => this.settle(job, false, err),
      hardLimit: (job) => this.timeouts.hardLimit(job),
      mayDispatch: () => this.dispatchGate(),
      onNewHead: (proc) => this.onNewHead(proc, true),
      onClaimsFailed: (proc, err) =>
        this.supervisor.onProtocolError(
          proc,
          new ProtocolError(`the claim pipe of child ${proc.pid} failed: ${messageOf(err)}`),
        ),
    });
    this.results = new ResultHandler({
      onWorkerUp: (proc, tasks, options) => {
        this.registered = tasks;
        this.taskDefaults = options;
        this.supervisor.onWorkerUp(proc);
        this.checkMemoryLimit(proc);
      },
      onInitError: (proc, err) => this.onLoadError(proc, new AppLoadError(o.app, describeError(err))),
      onStarted: (proc, job) => this.onStarted(proc, job, true),
      onSettled: (proc, job, ok, outcome, rss) => this.onSettled(proc, job, ok, outcome, rss),
      onWithdrawn: (proc, jobs) => this.onWithdrawn(proc, jobs),
      onDropped: () => this.tasks.schedule(),
      onProgress: (proc, job, value) => this.onProgress(proc, job, value),
    });
    this.timeouts = new TimeoutHandler(o.timeLimit, o.softTimeLimit, (name) => this.taskDefaults.get(name), {
      onHardTimeout: (proc, job, limit) => proc.kill('SIGKILL', new TimeLimitExceeded(limit, job.name)),
      onSoftTimeout: (proc, job) => proc.send([MessageType.SOFT_TIMEOUT, job.seq]),
      startOf: (proc, job) => {
        proc.learnStarts();
        return job.startedAt;
      },
    });
    this.startWatch = new StartWatch((proc) => this.lookForStart(proc));
    this.reloader = new RollingReload(
      {
        active: () => this.supervisor.active,
        target: () => this.supervisor.target,
        retire: (proc) => this.supervisor.retire(proc),
        running: () => this.state === 'running',
      },
      this.log,
    );
    if (o.autoscale !== undefined) {
      this.autoscaler = new Autoscaler(
        o.autoscale.max,
        o.autoscale.min,
        o.keepalive,
        o.autoscaleInterval,
        {
          reserved: () => this.reserved,
          current: () => this.supervisor.target,
          grow: (n) => this.supervisor.grow(n),
          // While start() waits, its children are what it waits for (with min 0, the one that learns the tasks): none is retired for idling.
          shrink: (n) => (this.startWaiters.length > 0 ? 0 : this.shrunk(this.supervisor.shrink(n))),
          onScale: (event) => this.notify('autoscale', event),
        },
        this.log,
      );
    }
  }

  /**
   * Spawns the children; resolves when the first `processes` (or autoscale
   * `min`, at least one) have loaded the task module, or as many as a shrink
   * meanwhile left (none: at once). With autoscale min 0 one child starts all
   * the same, so the task names and options are known and a module that does
   * not load fails the start; the Autoscaler retires it after `keepalive` if
   * no job comes. Rejects with PoolFailedError when
   * they keep dying first (e.g. the module does not load), PoolClosedError
   * after close() or terminate(), InvalidStateError when called twice.
   */
  start(): Promise<void> {
    if (this.state === 'closing' || this.state === 'closed')
      return Promise.reject(new PoolClosedError(`start() called on a pool that is ${this.state}`));
    if (this.state !== 'created')
      return Promise.reject(this.failure ?? new InvalidStateError(`start() called on a pool that is ${this.state}`));
    this.state = 'running';
    const initial = this.autoscaler ? Math.max(1, this.autoscaler.min) : this.options.processes;
    // Always a promise: a failure here rejects it, never throws (spawn errors themselves arrive later, as exits).
    try {
      this.supervisor.start(initial);
      this.autoscaler?.start();
      this.tasks.schedule();
      this.autoscaler?.maybeGrow();
      if (this.pending === 0) this.idleTrim.arm();
    } catch (err) {
      const failure = new PoolFailedError(`pool failed to start: ${messageOf(err)}`, { cause: err });
      this.fail(failure);
      return Promise.reject(failure);
    }
    if (initial === 0) return Promise.resolve();
    return new Promise((resolve, reject) => this.startWaiters.push({ resolve, reject }));
  }

  /**
   * Runs task `name` with `args` in a child; resolves with its return value or
   * rejects with its error. `args` may be a msgpack-encoded argument array
   * (a Uint8Array): it is passed through untouched and decoded in the child.
   * Typed from the task module with `new Pool<typeof tasks>()`;
   * `apply<T>(...)` names the result's type yourself. Jobs applied before
   * start() wait for it. Rejects with OptionError for a bad name, args or
   * option, PoolClosedError once the pool is closing, WorkerLostError or
   * TimeLimitExceeded when the child dies under the job, PoolFailedError
   * when the pool failed, RemoteTaskError (or the rebuilt PreforkError) for
   * what the task threw.
   */
  apply<N extends TaskName<R>>(
    name: N,
    ...rest: ArgsThenOptions<TaskArgs<R, N> | Uint8Array, ApplyOptions>
  ): Promise<TaskResult<R, N>>;
  apply<T, N extends TaskName<R> = TaskName<R>>(
    name: N,
    ...rest: ArgsThenOptions<TaskArgs<R, N> | Uint8Array, ApplyOptions>
  ): Promise<NoInfer<T>>;
  apply(name: string, args: JobArgs = [], options?: ApplyOptions): Promise<unknown> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.state === 'closing' || this.state === 'closed') return Promise.reject(new PoolClosedError());
    if (typeof name !== 'string' || name.length === 0)
      return Promise.reject(new OptionError('name', name, 'a non-empty task name', 'apply()'));
    if (!Array.isArray(args) && !(args instanceof Uint8Array)) {
      return Promise.reject(
        new OptionError('args', args, 'an array of arguments, or msgpack-encoded bytes of one', `apply(${name})`),
      );
    }
    return new Promise((resolve, reject) => {
      // Throws an OptionError naming the option and the value: the promise rejects with it.
      const opts: ResolvedApplyOptions | undefined = resolveApplyOptions(options);
      const seq = ++this.seq;
      const meta: JobMeta | null =
        opts && (opts.id !== undefined || opts.queue !== undefined || opts.retries !== undefined)
          ? { id: opts.id ?? String(seq), queue: opts.queue, retries: opts.retries ?? 0 }
          : null;
      if (meta !== null && opts?.scheduledFor !== undefined) meta.scheduledFor = opts.scheduledFor;
      const job = new PoolJob(seq, name, args, meta, opts, resolve, reject);
      this.pending++;
      this.totals.applied++;
      this.tasks.submit(job);
      this.autoscaler?.maybeGrow();
    });
  }

  /**
   * Reserved requests: jobs applied and not yet settled, waiting in the
   * outbound buffer or in a child. The Consumer applies every job it fetches
   * at once, so its prefetched jobs are counted here too.
   */
  get reserved(): number {
    return this.pending;
  }

  /** True from start() until close() begins or the pool fails: it takes jobs and keeps its children. */
  get running(): boolean {
    return this.state === 'running';
  }

  /** The task names the app registers (known once a child is up). */
  get taskNames(): readonly string[] {
    return this.registered;
  }

  /** The options a task declared with defineTasks({ name: { run, ...options } }). */
  taskOptions(name: string): TaskOptions | undefined {
    return this.taskDefaults.get(name);
  }

  /** The number of children the pool keeps: starting, idle or busy, and those still to spawn (growth goes in steps). */
  get size(): number {
    return this.supervisor.target;
  }

  /** The autoscale bounds now (`setAutoscale`, and a grow past max, change them), or undefined for a fixed pool. */
  get autoscaleBounds(): AutoscaleBounds | undefined {
    return this.autoscaler && { max: this.autoscaler.max, min: this.autoscaler.min };
  }

  /**
   * Adds up to n children, never past `maxProcesses`; returns how many it
   * added (0 unless running). With autoscale, a size past max raises max to
   * it (Celery's force_scale_up), so the Autoscaler does not cut it back at
   * once; it still retires idle children down to min after `keepalive`.
   * Throws OptionError unless n is an integer >= 1.
   */
  grow(n = 1): number {
    this.assertCount('grow', n);
    if (this.state !== 'running') return 0;
    const { maxProcesses } = this.options;
    const added = Math.min(n, Math.max(0, maxProcesses - this.supervisor.target));
    if (added < n) {
      this.log.warn(
        { asked: n, added, maxProcesses },
        `grow(${n}) stops at maxProcesses (${maxProcesses}): adding ${added}`,
      );
    }
    if (added === 0) return 0;
    this.supervisor.grow(added);
    const scaler = this.autoscaler;
    if (scaler !== undefined) {
      scaler.noteScaleUp();
      if (this.supervisor.target > scaler.max) {
        this.log.info(
          { from: scaler.max, to: this.supervisor.target, min: scaler.min },
          `grow(${n}) raises the autoscale max to ${this.supervisor.target}`,
        );
        scaler.max = this.supervisor.target;
      }
    }
    this.resized();
    return added;
  }

  /**
   * Replaces every child, one at a time, so a new version of the task module
   * is loaded (SIGHUP of `prefork worker`): each child is retired as when
   * recycled (it finishes the jobs it holds, then exits) once the
   * replacement of the one before is up, so no job fails or is lost and the
   * reload never takes capacity down by more than one child. A child that
   * goes meanwhile (recycled by maxTasksPerChild, shrunk) is not retired
   * again. Resolves how many children the reload retired itself (0 unless
   * running); a call during a reload makes it go round again when done. A
   * module that no longer loads fails the pool, as at start.
   */
  reload(): Promise<number> {
    if (this.state !== 'running') return Promise.resolve(0);
    return this.reloader.start();
  }

  /**
   * Retires up to n idle children (never a busy one) or children not spawned
   * yet; returns how many went. With autoscale, never below min (lower it
   * with setAutoscale); a fixed pool keeps at least one child, as `processes`
   * is at least 1 (with none, the jobs applied to it would wait for ever).
   * Throws OptionError unless n is an integer >= 1.
   */
  shrink(n = 1): number {
    this.assertCount('shrink', n);
    if (this.state !== 'running') return 0;
    // An autoscaling pool at 0 grows again on the next apply(); a fixed one never would.
    const min = this.autoscaler?.min ?? 1;
    const allowed = Math.min(n, Math.max(0, this.supervisor.target - min));
    if (allowed < n) {
      const floor = this.autoscaler === undefined ? 'one child (a fixed pool keeps one)' : `the autoscale min (${min})`;
      this.log.warn({ asked: n, allowed, min }, `shrink(${n}) stops at ${floor}: retiring at most ${allowed}`);
    }
    const gone = allowed === 0 ? 0 : this.shrunk(this.supervisor.shrink(allowed));
    if (gone > 0) this.resized();
    return gone;
  }

  /**
   * After `gone` children went by a shrink: start() may now wait for none
   * (a shrink to 0 while they booted), so it resolves rather than wait for
   * a WORKER_UP that no child will send. Returns `gone`.
   */
  private shrunk(gone: number): number {
    if (gone > 0) this.resolveStartWaitersIfReady();
    return gone;
  }

  /**
   * While `gate()` returns false no job is written to a child: jobs wait in
   * the outbound buffer. Call resumeDispatch() once it would return true.
   * (The Worker holds jobs back while it cannot be sure of its lease.)
   */
  setDispatchGate(gate: () => boolean): void {
    this.dispatchGate = gate;
  }

  /** Writes what the dispatch gate held back (it lets jobs through again). */
  resumeDispatch(): void {
    this.tasks.schedule();
  }

  /**
   * Changes the autoscale bounds at run time (`prefork control autoscale MAX,MIN`).
   * Throws InvalidStateError for a pool created without autoscale, OptionError
   * for bounds that are not integers with 0 <= min <= max <= maxProcesses.
   */
  setAutoscale(max: number, min: number): void {
    if (this.autoscaler === undefined)
      throw new InvalidStateError('setAutoscale(): this pool was created without autoscale');
    if (parseAutoscale([max, min]) === undefined) {
      throw new OptionError('autoscale', [max, min], AUTOSCALE_EXPECTED);
    }
    if (max > this.options.maxProcesses) {
      throw new OptionError('autoscale', [max, min], `a max of at most maxProcesses (${this.options.maxProcesses})`);
    }
    this.autoscaler.setBounds(max, min);
    this.resized();
  }

  private resized(): void {
    this.notify('resize', { processes: this.supervisor.target, autoscale: this.autoscaleBounds });
  }

  /**
   * Takes back every job not started yet and rejects it with
   * JobWithdrawnError, so the caller can return it to its queue. Jobs still in
   * the outbound buffer, and those a child holds ahead that its claim pipe
   * gives back (fair), go at once (their count is returned); other jobs
   * already written into a child's pipe (fcfs) are asked back from the
   * child and rejected when it answers. Jobs already started run to the end.
   */
  withdraw(): number {
    const jobs = this.tasks.outbound.drain();
    for (const proc of this.supervisor.procs) jobs.push(...proc.takeBack(proc.inFlight.length));
    for (const job of jobs) this.settle(job, false, new JobWithdrawnError());
    for (const proc of this.supervisor.procs) proc.withdraw();
    return jobs.length;
  }

  /**
   * Takes back up to `n` of the jobs still in the outbound buffer, the last
   * queued first, and rejects each with JobWithdrawnError (the caller returns
   * them to their queue); jobs a child holds or runs stay, and so do jobs
   * that came back to the buffer when their child died (they are next in
   * line). With `take`, only jobs whose id it accepts are taken (a caller
   * takes back its own jobs, not those others applied to the same pool).
   * Returns the ids of the jobs taken (ApplyOptions.id, else the pool's
   * sequence number), before their promises reject.
   */
  withdrawQueued(n: number, take: (id: string) => boolean = () => true): string[] {
    const jobs = this.tasks.outbound.popBackWhere(n, (job) => job.requeues === 0 && take(job.id));
    for (const job of jobs) this.settle(job, false, new JobWithdrawnError());
    return jobs.map((job) => job.id);
  }

  /**
   * Stops the jobs applied with id `id` (ApplyOptions.id), each rejecting
   * with `reason`. One not started never runs: it leaves the outbound buffer
   * at once, or is asked back from its child's pipe. With `terminate`, a
   * running one's signal aborts with `reason`; its child is retired (a
   * replacement starts now, so the pool stays full), the jobs queued behind
   * it in that child's pipe come back and run on other children without
   * spending a retry, and if the job has not ended after `terminate.grace`
   * ms the child is SIGKILLed. A job whose start the parent has not read
   * yet counts as not started: it is asked back and sent the abort too, and
   * if it did start, its child ends once `terminate.grace` has passed.
   * Without `terminate`, a running job runs on. Returns how many jobs were
   * found, not started and running.
   */
  cancel(id: string, reason: Error, terminate?: { grace: number }): CancelledJobs {
    let unstarted = 0;
    let running = 0;
    for (const job of this.tasks.outbound.removeWhere((j) => j.id === id)) {
      unstarted++;
      this.settle(job, false, reason);
    }
    for (const proc of [...this.supervisor.procs]) {
      if (proc.state === 'exited') continue;
      proc.learnStarts();
      let askBack = false;
      const maybeStarted: PoolJob[] = [];
      for (const job of proc.inFlight) {
        if (job.id !== id || job.settled) continue;
        job.cancelReason ??= reason;
        if (job.startedAt === 0) {
          unstarted++;
          askBack = true;
          maybeStarted.push(job);
        } else {
          running++;
          if (terminate !== undefined) {
            this.endChild(proc, terminate.grace, job, reason);
            askBack = false;
          }
        }
      }
      if (!askBack || proc.killReason !== undefined) continue;
      // WITHDRAWN brings back every unstarted job: the cancelled ones reject, the others run elsewhere.
      proc.send([MessageType.WITHDRAW]);
      if (terminate === undefined) continue;
      // Its ACK may be in the pipe still unread: the ABORT stops it if it runs (a child ignores an
      // ABORT for a job it is not running), and past the grace a job that did start ends its child.
      for (const job of maybeStarted) {
        proc.send([MessageType.ABORT, job.seq, serializeError(reason)]);
        this.endIfStarted(proc, job, reason, terminate.grace);
      }
    }
    return { unstarted, running };
  }

  /** After `grace` ms: a cancelled job the parent then knows started, and that has not ended, ends its child now. */
  private endIfStarted(proc: WorkerProcess, job: PoolJob, reason: Error, grace: number): void {
    const timer = setTimeout(() => {
      if (job.settled || proc.state === 'exited' || proc.killReason !== undefined) return;
      proc.learnStarts();
      // Not settled, so still in this child: a job leaves it only to be settled (a cancelled one never reruns).
      if (job.startedAt !== 0) this.endChild(proc, 0, job, reason);
    }, grace);
    timer.unref();
    void proc.exited.then(() => clearTimeout(timer));
  }

  /**
   * Ends a child early: the jobs queued in its pipe are asked back (they run
   * elsewhere), it is told to exit after its running job (a replacement
   * starts now), that job's signal aborts with `reason` if given, and after
   * `grace` ms a child still there is SIGKILLed (its job rejects with the
   * job's cancelReason, else WorkerLostError).
   */
  private endChild(proc: WorkerProcess, grace: number, job: PoolJob, reason: Error): void {
    proc.send([MessageType.ABORT, job.seq, serializeError(reason)]);
    proc.send([MessageType.WITHDRAW]);
    this.supervisor.retire(proc);
    const timer = setTimeout(() => proc.kill('SIGKILL', reason), grace);
    timer.unref();
    void proc.exited.then(() => clearTimeout(timer));
  }

  /**
   * The jobs the pool holds now: those running in a child (with its pid and
   * when they started) and those applied and not started yet. A snapshot
   * that costs O(jobs held): for inspection (`prefork inspect active`).
   */
  jobs(): PoolJobs {
    return listJobs(this.supervisor.procs, this.tasks.outbound);
  }

  /** A snapshot of the children, the counters and the outbound buffer. */
  stats(): PoolStats {
    for (const proc of this.supervisor.procs) proc.learnStarts();
    return collectStats(
      this.supervisor.procs,
      { ...this.totals, restarts: this.supervisor.restarts },
      {
        reserved: this.reserved,
        outbound: this.tasks.outbound.length,
        strategy: this.options.strategy,
        autoscale: this.autoscaleBounds,
      },
    );
  }

  /**
   * Refuses new jobs (PoolClosedError), waits for every applied job to
   * settle, then lets the children exit (SIGKILL past `killTimeout`).
   * Before start(), rejects the buffered jobs with PoolClosedError.
   */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    if (this.state === 'created') {
      this.state = 'closed';
      this.rejectBuffered(new PoolClosedError('the pool was closed before it started'));
      return;
    }
    if (this.state === 'running') this.state = 'closing';
    this.reloader.changed();
    this.autoscaler?.stop();
    this.resolveStartWaiters(new PoolClosedError('the pool was closed before it started'));
    if (this.pending > 0 && this.failure === undefined) {
      await new Promise<void>((resolve) => this.closeWaiters.push(resolve));
    }
    await this.stopChildren(false);
  }

  /** Kills the children now; every unsettled job is rejected with PoolClosedError. */
  async terminate(): Promise<void> {
    if (this.state === 'closed' && this.supervisor.procs.length === 0) return;
    this.terminating = true;
    this.state = this.state === 'failed' ? 'failed' : 'closing';
    this.reloader.changed();
    this.autoscaler?.stop();
    this.tasks.pause();
    this.timeouts.clearAll();
    this.startWatch.stop();
    this.resolveStartWaiters(new PoolClosedError('the pool was terminated before it started'));
    this.rejectBuffered(new PoolClosedError('the pool was terminated before the job started'));
    await this.stopChildren(true);
  }

  private async stopChildren(kill: boolean): Promise<void> {
    this.supervisor.stop();
    this.idleTrim.stop();
    this.startWatch.stop();
    const procs = [...this.supervisor.procs];
    const exits = procs.map((proc) => proc.exited);
    for (const proc of procs) {
      // Children ignore SIGTERM (it may come from the whole process group): only SIGKILL ends one at once.
      if (kill || proc.state === 'starting') proc.kill('SIGKILL');
      else proc.shutdown();
    }
    const escalate = setTimeout(() => {
      for (const proc of procs) proc.kill('SIGKILL');
    }, this.options.killTimeout);
    escalate.unref();
    await Promise.all(exits);
    clearTimeout(escalate);
    if (this.state !== 'failed') this.state = 'closed';
  }

  private onMessage(proc: WorkerProcess, msg: ChildMessage): void {
    try {
      this.results.handle(proc, msg);
    } catch (err) {
      this.supervisor.onProtocolError(proc, err as Error);
    }
  }

  /** The job started: its limits arm if it still `runs`, and onStart hears of it (once). */
  private onStarted(proc: WorkerProcess, job: PoolJob, runs: boolean): void {
    job.announced = true;
    if (runs) this.timeouts.start(proc, job, job.startedAt);
    const onStart = job.options?.onStart;
    if (onStart === undefined) return;
    // User code: what it throws is its own fault, never the child's (this runs while the child's frames are read).
    try {
      onStart({ pid: proc.pid, startedAt: job.startedAt });
    } catch (err) {
      this.log.error({ err, childPid: proc.pid, jobId: job.id, task: job.name }, 'an onStart callback threw; ignored');
    }
  }

  private onProgress(proc: WorkerProcess, job: PoolJob, value: unknown): void {
    // A report implies the start, which a child with a start record does not announce: onStart hears of it first.
    if (!job.announced) {
      proc.learnStarts();
      if (job.startedAt === 0) job.startedAt = Date.now();
      this.onStarted(proc, job, true);
    }
    const onProgress = job.options?.onProgress;
    if (onProgress === undefined) return;
    // User code, called while the child's frames are read: what it throws is not the child's fault.
    try {
      onProgress(value, Date.now());
    } catch (err) {
      this.log.error(
        { err, childPid: proc.pid, jobId: job.id, task: job.name },
        'an onProgress callback threw; ignored',
      );
    }
  }

  /**
   * A job at the head of a child's in-flight list whose start is not known
   * yet: either just written to an idle child, or next in line after a
   * RESULT. A child with a start record does not wake the parent when it
   * starts it, so its limits arm from now (when it was just written, it cannot
   * have started before) or from its recorded start, and the StartWatch
   * looks for the start if someone waits for it (onStart).
   */
  private onNewHead(proc: WorkerProcess, justWritten: boolean): void {
    const head = proc.inFlight.peek();
    if (head === undefined || head.announced || !proc.recordsStarts) return;
    const limited = this.timeouts.limited(head);
    if (limited && !justWritten) proc.learnStarts();
    if (head.startedAt > 0) {
      this.onStarted(proc, head, true);
      return;
    }
    if (limited) this.timeouts.start(proc, head, Date.now());
    if (head.options?.onStart !== undefined) this.startWatch.add(proc);
  }

  /** The StartWatch's look at a child: announces a start its record shows; true while one is still awaited. */
  private lookForStart(proc: WorkerProcess): boolean {
    if (proc.state === 'exited') return false;
    proc.learnStarts();
    const head = proc.inFlight.peek();
    if (head === undefined || head.announced) return false;
    if (head.startedAt > 0) {
      this.onStarted(proc, head, true);
      return false;
    }
    return head.options?.onStart !== undefined;
  }

  private onSettled(proc: WorkerProcess, job: PoolJob, ok: boolean, outcome: unknown, rss: unknown): void {
    this.timeouts.clear(proc);
    // A RESULT implies the start: a job too short to have been seen starting is announced now.
    if (!job.announced) this.onStarted(proc, job, false);
    // Settled first: nothing after it can leave the job hanging.
    this.settle(job, ok, outcome);
    this.tasks.settled(proc, job.startedAt);
    if (proc.inFlight.length > 0) this.newHeads.add(proc);
    proc.jobsDone++;
    if (typeof rss === 'number') proc.rss = rss;
    if (proc.inFlight.length === 0 && proc.state === 'busy') proc.state = 'idle';
    const limit = this.options.maxMemoryPerChild;
    if (limit !== undefined && typeof rss === 'number' && rss > limit && !proc.retiring) {
      this.log.info(
        { childPid: proc.pid, rss, maxMemoryPerChild: limit },
        'child over maxMemoryPerChild; replacing it',
      );
      this.supervisor.retire(proc);
    }
  }

  /**
   * Once per pool: a maxMemoryPerChild below what a child takes as soon as it
   * is up replaces every child after every job. Most likely a unit slip: a
   * bare number is bytes, and Celery's --max-memory-per-child counts KiB
   * (its 200000 is "200MB" here). Said, not refused: a small limit is how a
   * test makes children recycle.
   */
  private checkMemoryLimit(proc: WorkerProcess): void {
    const limit = this.options.maxMemoryPerChild;
    if (limit === undefined || this.memoryLimitChecked) return;
    const rss = proc.readRss();
    if (rss === undefined) return;
    this.memoryLimitChecked = true;
    if (rss < limit) return;
    const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    this.log.warn(
      { maxMemoryPerChild: limit, childPid: proc.pid, rss },
      `maxMemoryPerChild (${limit} bytes, ${mib(limit)}) is below a child's RSS once it is up (${mib(rss)}): every child will be replaced after each job. A bare number is bytes: "512MB" for megabytes (Celery's --max-memory-per-child counts KiB)`,
    );
  }

  private onJobsOrphaned(proc: WorkerProcess, startedJobs: PoolJob[], unstarted: PoolJob[], lost: Error): void {
    this.timeouts.clear(proc);
    this.newHeads.delete(proc);
    for (const started of startedJobs) {
      if (!started.announced) this.onStarted(proc, started, false);
      // Stopped on purpose (cancel): not lost.
      if (started.cancelReason !== undefined) {
        this.settle(started, false, started.cancelReason);
        continue;
      }
      const error = this.killedPastLimit(started, lost) ?? lost;
      if (this.terminating) {
        this.settle(started, false, new PoolClosedError('the pool was terminated while the job was running'));
      } else {
        this.totals.lost++;
        // The caller reports the job's failure (a Worker logs it once); the child's death is logged on its own.
        this.log.debug(
          { childPid: proc.pid, jobId: started.id, task: started.name, err: error },
          'job lost with its child',
        );
        this.settle(started, false, error);
        this.notify('job-lost', { id: started.id, name: started.name, pid: proc.pid, error: error as WorkerLostError });
      }
    }
    if (unstarted.length === 0) return;
    this.giveBackUnstarted(proc, unstarted, 'giving unstarted jobs of a dead child to other children');
  }

  /**
   * A child SIGKILLed past its job's hard limit, not by the parent: its own
   * watchdog did it (the parent was stopped or too slow). The job's fate is the same.
   */
  private killedPastLimit(job: PoolJob, lost: Error): TimeLimitExceeded | undefined {
    if (!(lost instanceof WorkerLostError) || lost.signal !== 'SIGKILL') return undefined;
    const limit = this.timeouts.hardLimit(job);
    if (limit === undefined || Date.now() - job.startedAt < limit) return undefined;
    return new TimeLimitExceeded(limit, job.name);
  }

  private onWithdrawn(proc: WorkerProcess, jobs: PoolJob[]): void {
    if (proc.inFlight.length === 0 && proc.state === 'busy') proc.state = 'idle';
    else this.newHeads.add(proc);
    this.giveBackUnstarted(proc, jobs, 'a child gave back jobs it had not started; giving them to other children');
  }

  /** Jobs that never started: rejected if withdraw() asked for them or the pool is going, else run elsewhere. */
  private giveBackUnstarted(proc: WorkerProcess, unstarted: PoolJob[], why: string): void {
    const going = this.terminating || this.failure !== undefined;
    const rerun: PoolJob[] = [];
    for (const job of unstarted) {
      if (job.cancelReason !== undefined) this.settle(job, false, job.cancelReason);
      else if (job.withdrawing) this.settle(job, false, new JobWithdrawnError());
      else if (going)
        this.settle(job, false, this.failure ?? new PoolClosedError('the pool was terminated before the job started'));
      else rerun.push(job);
    }
    if (rerun.length > 0) {
      // Never started: run them elsewhere without counting a failure (Celery loses these).
      for (const job of rerun) job.requeues++;
      this.log.info({ childPid: proc.pid, jobs: rerun.length }, why);
      this.tasks.giveBack(rerun);
    } else {
      // The child has room again.
      this.tasks.schedule();
    }
  }

  private onProcessUp(proc: WorkerProcess): void {
    this.reloader.changed();
    this.notify('process-up', { pid: proc.pid });
    this.tasks.schedule();
    this.resolveStartWaitersIfReady();
  }

  /** start() resolves once the children the pool keeps (as many as are there) are up. */
  private resolveStartWaitersIfReady(): void {
    if (this.startWaiters.length === 0) return;
    const ready = this.supervisor.procs.filter((p) => p.ready).length;
    if (ready >= Math.min(this.supervisor.target, this.supervisor.procs.length)) this.resolveStartWaiters();
  }

  /**
   * A child could not load the task module. Every replacement fails the same
   * way until the module is fixed (or the restart limit fails the pool), so
   * the error is logged once, with its file and line; the deaths it causes
   * are not logged again one by one.
   */
  private onLoadError(proc: WorkerProcess, err: AppLoadError): void {
    this.failedToLoad.add(proc);
    if (!this.loadErrorsLogged.has(err.message)) {
      this.loadErrorsLogged.add(err.message);
      this.log.error({ childPid: proc.pid }, err.message);
    }
    this.supervisor.onInitError(proc, err);
  }

  private onProcessDown(
    proc: WorkerProcess,
    exitCode: number | null,
    signal: NodeJS.Signals | null,
    expected: boolean,
  ): void {
    const quiet = expected || this.failedToLoad.has(proc);
    this.log[quiet ? 'debug' : 'warn'](
      { childPid: proc.pid, exitCode, signal },
      expected ? 'child exited' : 'child died',
    );
    this.notify('process-down', { pid: proc.pid, exitCode, signal, expected, reason: exitReason(proc, expected) });
    this.reloader.changed();
  }

  private settle(job: PoolJob, ok: boolean, outcome: unknown): void {
    if (job.settled) return;
    job.settled = true;
    this.pending--;
    if (ok) {
      this.totals.done++;
      job.resolve(outcome);
    } else {
      // A withdrawn job did not fail: it goes back to its queue.
      if (!(outcome instanceof JobWithdrawnError)) this.totals.failed++;
      job.reject(outcome as Error);
    }
    if (this.pending > 0) return;
    if (this.state === 'running') this.idleTrim.arm();
    if (this.closeWaiters.length > 0) {
      for (const resolve of this.closeWaiters.splice(0)) resolve();
    }
  }

  private fail(err: PoolFailedError): void {
    if (this.failure !== undefined) return;
    this.failure = err;
    this.state = 'failed';
    // A failure at start rejects start(): the caller reports it (logged here too, it would be said twice).
    if (this.startWaiters.length === 0) this.log.error({ err }, err.message);
    // Replace no child and leave no timer behind (a pending spawn would keep the process alive).
    this.supervisor.stop();
    this.autoscaler?.stop();
    this.startWatch.stop();
    this.idleTrim.stop();
    this.tasks.pause();
    this.resolveStartWaiters(err);
    this.rejectBuffered(err);
    for (const proc of this.supervisor.procs) proc.kill('SIGKILL');
    for (const resolve of this.closeWaiters.splice(0)) resolve();
    this.reloader.changed();
    this.notify('failed', err);
  }

  /**
   * Emits to the user's listeners, each on its own: one that throws is logged
   * and the others still run. These calls sit in the middle of reading a
   * child's frames or settling its exit: a listener's error must not be taken
   * for the child's (a protocol error) nor stop the pool's own bookkeeping.
   */
  private notify<K extends keyof PoolEvents>(event: K, ...args: PoolEvents[K]): void {
    for (const listener of this.rawListeners(event) as ((...a: PoolEvents[K]) => void)[]) {
      try {
        listener.apply(this, args);
      } catch (err) {
        this.log.error({ err, event }, `a '${event}' listener threw; ignored`);
      }
    }
  }

  private rejectBuffered(err: Error): void {
    for (const job of this.tasks.outbound.drain()) this.settle(job, false, err);
  }

  private resolveStartWaiters(err?: Error): void {
    for (const waiter of this.startWaiters.splice(0)) {
      if (err) waiter.reject(err);
      else waiter.resolve();
    }
  }

  private assertCount(method: string, n: number): void {
    if (!Number.isSafeInteger(n) || n < 1) throw new OptionError('n', n, integerRange(1), `${method}(n)`);
  }
}

/** A task module's load error: what, where (the child found the file, line and column) and, if known, the fix. */
function describeError(err: SerializedError): string {
  const location = err.props?.location;
  const hint = err.props?.hint;
  return `${err.name}: ${err.message}${typeof location === 'string' ? ` at ${location}` : ''}${typeof hint === 'string' ? ` (${hint})` : ''}`;
}
