import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import { PoolFailedError, ProtocolError, WorkerLostError } from '../errors.js';
import type { PoolJob } from './job.js';
import { retryDelay, type BackoffPolicy } from '../util/backoff.js';
import { RestartLimiter } from './restart-limiter.js';
import { WorkerProcess, type ProcessOwner, type SpawnSettings } from './worker-process.js';

/** Pauses before spawning again after spawns failed for want of resources: 0.1 s doubling to 5 s. */
const SPAWN_RETRY: BackoffPolicy = { delay: 100, cap: 5_000 };
/**
 * How many children may be starting at once. Growth (and the first spawn)
 * goes in steps: the next child is spawned as one comes up, so a large grow()
 * does not fork everything at once and starve the machine while they boot.
 */
export const SPAWN_STEP = Math.max(2, availableParallelism());
/** Spawn errors that a moment may cure (fd table or process table full, memory short): worth a pause. */
const TRANSIENT_SPAWN_ERRORS = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM']);

export interface SupervisorHooks {
  /**
   * A child died holding jobs: fail the started ones (the one it ran, and any
   * before it whose RESULT it could not send), give back the rest.
   */
  onJobsOrphaned(proc: WorkerProcess, started: PoolJob[], unstarted: PoolJob[], error: Error): void;
  onProcessUp(proc: WorkerProcess): void;
  onProcessDown(proc: WorkerProcess, exitCode: number | null, signal: NodeJS.Signals | null, expected: boolean): void;
  /** Too many children died before they could work: the pool cannot go on. */
  onFatal(err: PoolFailedError): void;
}

export interface SupervisorSettings {
  spawn: SpawnSettings;
  procAliveTimeout: number;
  maxRestarts: number;
  restartWindow: number;
}

/**
 * maintain_pool: keeps `target` children alive, replaces the dead, kills a
 * child that sends no WORKER_UP within procAliveTimeout, and stops forking when
 * children keep dying before they work (a broken task module, a bad execArgv,
 * a spawn that fails).
 */
export class Supervisor {
  readonly procs: WorkerProcess[] = [];
  target = 0;
  restarts = 0;
  private running = false;
  private failed = false;
  private readonly limiter: RestartLimiter;
  private readonly aliveTimers = new Map<WorkerProcess, NodeJS.Timeout>();
  /** Why a child died before it was up; a load error is kept whole, as the cause of a pool failure. */
  private readonly initErrors = new Map<WorkerProcess, string | Error>();
  /** Transient spawn errors since the last WORKER_UP: they set the next pause. */
  private spawnFailures = 0;
  /** Set while spawning waits out a transient spawn error: maintain() spawns nothing until it fires. */
  private spawnTimer: NodeJS.Timeout | undefined;
  /**
   * Deaths the limiter counts since a child last came up. Children that hang
   * as they load die one procAliveTimeout apart, SPAWN_STEP at a time: too
   * slowly for restartWindow to ever hold more than maxRestarts of them.
   */
  private deathsInARow = 0;

  constructor(
    private readonly settings: SupervisorSettings,
    private readonly owner: ProcessOwner,
    private readonly hooks: SupervisorHooks,
    private readonly log: Logger,
  ) {
    this.limiter = new RestartLimiter(settings.maxRestarts, settings.restartWindow);
  }

  /** Children that count toward the target: not told to go, not gone. */
  get active(): WorkerProcess[] {
    return this.procs.filter((p) => !p.retiring && p.state !== 'exited');
  }

  /** How many are active, without building the list (maintain() runs often). */
  get activeCount(): number {
    let n = 0;
    for (const p of this.procs) if (!p.retiring && p.state !== 'exited') n++;
    return n;
  }

  private get startingCount(): number {
    let n = 0;
    for (const p of this.procs) if (p.state === 'starting') n++;
    return n;
  }

  start(target: number): void {
    this.running = true;
    this.target = target;
    this.maintain();
  }

  /** Stop replacing children (close, terminate, a failed pool); clears every timer. */
  stop(): void {
    this.running = false;
    clearTimeout(this.spawnTimer);
    this.spawnTimer = undefined;
    for (const timer of this.aliveTimers.values()) clearTimeout(timer);
    this.aliveTimers.clear();
  }

  maintain(): void {
    if (!this.running || this.failed || this.spawnTimer !== undefined) return;
    const missing = this.target - this.activeCount;
    const room = SPAWN_STEP - this.startingCount;
    for (let i = Math.min(missing, room); i > 0; i--) this.spawnOne();
  }

  onWorkerUp(proc: WorkerProcess): void {
    clearTimeout(this.aliveTimers.get(proc));
    this.aliveTimers.delete(proc);
    if (proc.state === 'starting') proc.state = 'idle';
    this.spawnFailures = 0;
    this.deathsInARow = 0;
    this.log.debug({ childPid: proc.pid }, 'process up');
    // The next step of a growth, before the pool counts who is ready.
    this.maintain();
    this.hooks.onProcessUp(proc);
  }

  onInitError(proc: WorkerProcess, err: Error): void {
    this.initErrors.set(proc, err);
  }

  /** Finish what it holds, then exit; a replacement starts now. */
  retire(proc: WorkerProcess): void {
    if (proc.retiring) return;
    dismiss(proc);
    this.maintain();
  }

  /** Children not spawned yet go first, then idle ones, never a busy one; returns how many went. */
  shrink(n: number): number {
    const unspawned = Math.min(n, Math.max(0, this.target - this.activeCount));
    this.target -= unspawned;
    const candidates = this.active.filter((p) => p.state === 'idle' || p.state === 'starting');
    const chosen = candidates.slice(0, Math.max(0, n - unspawned));
    this.target = Math.max(0, this.target - chosen.length);
    for (const proc of chosen) dismiss(proc);
    return unspawned + chosen.length;
  }

  grow(n: number): void {
    this.target += n;
    this.maintain();
  }

  onProtocolError(proc: WorkerProcess, err: Error): void {
    this.log.error({ childPid: proc.pid, err }, 'protocol error from child; replacing it');
    // Named if the pool fails: a task module that writes to fd 1 as it loads breaks every child the same way.
    if (proc.state === 'starting') this.initErrors.set(proc, `protocol error from child ${proc.pid}: ${err.message}`);
    proc.kill('SIGKILL', err instanceof ProtocolError ? err : new ProtocolError(err.message, { cause: err }));
  }

  onExit(proc: WorkerProcess, exitCode: number | null, signal: NodeJS.Signals | null): void {
    clearTimeout(this.aliveTimers.get(proc));
    this.aliveTimers.delete(proc);
    const initError = this.initErrors.get(proc);
    this.initErrors.delete(proc);
    const detail =
      proc.spawnError !== undefined
        ? `cannot start a child process (${this.settings.spawn.execPath}): ${proc.spawnError.message}`
        : initError instanceof Error
          ? initError.message
          : initError;
    const cause = proc.spawnError === undefined && initError instanceof Error ? initError : undefined;
    const index = this.procs.indexOf(proc);
    if (index >= 0) this.procs.splice(index, 1);
    const held = proc.inFlight.drain();
    // The child runs its jobs in order: those known started come first (the WorkerProcess read its start record).
    let startedCount = 0;
    while (startedCount < held.length && (held[startedCount] as PoolJob).startedAt > 0) startedCount++;
    const started = held.slice(0, startedCount);
    const unstarted = held.slice(startedCount);
    // Expected: we killed it, or we asked it to go and it left cleanly. A retiring child that crashes is a death like any other.
    const expected =
      proc.retiring &&
      !(proc.killReason instanceof ProtocolError) &&
      (proc.killed || (exitCode === 0 && signal === null));
    if (held.length > 0) {
      const reason =
        proc.killReason instanceof ProtocolError ? `protocol error: ${proc.killReason.message}` : undefined;
      const error =
        proc.killReason !== undefined && !(proc.killReason instanceof ProtocolError)
          ? proc.killReason
          : new WorkerLostError(proc.pid, exitCode, signal, reason);
      this.hooks.onJobsOrphaned(proc, started, unstarted, error);
    }
    // A process that never started was never up: no process-down, but say why.
    if (proc.spawnError !== undefined)
      this.log.warn({ err: proc.spawnError, execPath: this.settings.spawn.execPath }, 'cannot start a child process');
    else this.hooks.onProcessDown(proc, exitCode, signal, expected);
    if (!this.running) return;
    if (!expected || proc.killReason !== undefined) this.restarts++;
    // A death that no job explains (before WORKER_UP, or while idle before its first job) counts toward the
    // fork-loop guard, also when the parent killed it for breaking the protocol: a replacement would break it
    // the same way. A child that settled a job did work: dying idle after it (a task's unhandled rejection
    // once it returned) is the job's harm, not a module that cannot work, and its replacements cannot loop
    // faster than jobs run; counting it would fail a healthy pool over a task's bug.
    const brokeProtocol = proc.killReason instanceof ProtocolError;
    const didWork = proc.jobsDone > 0;
    if ((!proc.retiring || brokeProtocol) && started.length === 0 && !didWork) {
      const inWindow = this.limiter.record();
      if (inWindow || ++this.deathsInARow > this.settings.maxRestarts) {
        const count = inWindow
          ? `${this.limiter.recent} times within ${this.settings.restartWindow} ms`
          : `${this.deathsInARow} times in a row, none coming up in between`;
        this.fail(proc, exitCode, signal, detail, cause, count);
        return;
      }
    }
    if (isTransient(proc.spawnError)) this.spawnLater();
    else this.maintain();
  }

  /**
   * A spawn failed for want of resources (a burst of EMFILE/EAGAIN): spawning
   * again at once would fail the same way and spend the restart limit within
   * microseconds. Pausing (doubling up to SPAWN_RETRY's cap, reset by the
   * next WORKER_UP) spreads the attempts over the limiter's window, so a
   * shortage that clears lets the pool recover and one that lasts still fails it.
   */
  private spawnLater(): void {
    if (this.spawnTimer !== undefined) return;
    const wait = retryDelay(this.spawnFailures++, SPAWN_RETRY);
    this.log.warn({ retryInMs: wait }, 'spawning a child failed for want of resources; trying again after a pause');
    // Not unref'd: a running pool holds the process as its children's pipes do, and with none alive an
    // apply() awaiting the recovery would be dropped when the process exits. stop() clears it.
    this.spawnTimer = setTimeout(() => {
      this.spawnTimer = undefined;
      this.maintain();
    }, wait);
  }

  private fail(
    proc: WorkerProcess,
    exitCode: number | null,
    signal: NodeJS.Signals | null,
    detail: string | undefined,
    cause: Error | undefined,
    count: string,
  ): void {
    this.failed = true;
    const how = signal ? `signal ${signal}` : `exit code ${String(exitCode)}`;
    const message =
      detail !== undefined
        ? `pool failed: ${detail} (child processes died ${count})`
        : `pool failed: child processes died ${count} before doing any work (last: pid ${proc.pid}, ${how})`;
    this.hooks.onFatal(new PoolFailedError(message, cause === undefined ? undefined : { cause }));
  }

  private spawnOne(): void {
    const proc = new WorkerProcess(this.settings.spawn, this.owner);
    this.procs.push(proc);
    const timer = setTimeout(() => {
      this.aliveTimers.delete(proc);
      if (proc.state !== 'starting') return;
      this.log.warn(
        { childPid: proc.pid, procAliveTimeout: this.settings.procAliveTimeout },
        'child sent no WORKER_UP in time; killing it',
      );
      this.initErrors.set(
        proc,
        `child ${proc.pid} sent no WORKER_UP within procAliveTimeout (${this.settings.procAliveTimeout} ms)`,
      );
      proc.kill('SIGKILL');
      // Killed by us, but it is a boot failure: count it.
      proc.retiring = false;
    }, this.settings.procAliveTimeout);
    timer.unref();
    this.aliveTimers.set(proc, timer);
  }
}

/**
 * Tells a child to go: one up finishes what it holds, then exits. One not up
 * yet holds nothing and is ended (children ignore SIGTERM): told by a SHUTDOWN,
 * it would still send its WORKER_UP first, and a WORKER_UP from a child that
 * is no longer starting is a protocol error, counted toward the restart limit.
 */
function dismiss(proc: WorkerProcess): void {
  if (proc.state === 'starting') proc.kill('SIGKILL');
  else proc.shutdown();
}

function isTransient(err: NodeJS.ErrnoException | undefined): boolean {
  const code = err?.code;
  return code !== undefined && TRANSIENT_SPAWN_ERRORS.has(code);
}
