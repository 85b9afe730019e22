import type { Logger } from 'pino';
import type { Worker } from '../worker.js';

export type StopMode = 'warm' | 'cold';

/**
 * The signal table (Celery's): SIGTERM and a first SIGINT stop warm (finish
 * jobs in flight, give back the rest); a second SIGINT or SIGQUIT stops cold
 * (kill the children; unfinished jobs go back). Returns the handler, for
 * signals held before it was installed.
 */
export function onStopSignals(log: Logger, stop: (mode: StopMode) => void): (signal: NodeJS.Signals) => void {
  let interrupts = 0;
  const handle = (signal: NodeJS.Signals): void => {
    const mode: StopMode = signal === 'SIGQUIT' || (signal === 'SIGINT' && ++interrupts > 1) ? 'cold' : 'warm';
    // Only a second SIGINT goes cold: after a SIGTERM, one ^C would be a first SIGINT, warm again.
    const cold = signal === 'SIGINT' ? '^C again' : 'SIGQUIT';
    log.warn(
      { signal },
      mode === 'warm'
        ? `${signal}: warm shutdown (finishing jobs in flight; ${cold} for a cold shutdown)`
        : `${signal}: cold shutdown`,
    );
    stop(mode);
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
  process.on('SIGQUIT', handle);
  return handle;
}

/**
 * The signals that act on a running node (Celery's and Sidekiq's): SIGTTIN
 * and SIGTTOU grow and shrink the pool by one child (as `control grow 1`
 * and `shrink 1`: with autoscale a grow past max raises it, a shrink stops
 * at min), SIGHUP replaces the children one by one (the task module is
 * loaded afresh), SIGUSR1 logs the pool's stats and each child's job,
 * SIGTSTP makes the node quiet (it fetches no more; the jobs it holds run on).
 */
export function onPoolSignals(worker: Worker, log: Logger, stopAsked: () => boolean): void {
  const pool = worker.pool;
  // A node that stops (or whose pool is not running) is neither resized nor reloaded: its pool would not
  // move, and the reasons below would name a bound it is not at. Asked to stop, its pool may run a moment more.
  const ignored = (signal: NodeJS.Signals): boolean => {
    const stopping = stopAsked();
    if (pool.running && !stopping) return false;
    log.warn({ signal }, `${signal}: ignored: the node is ${stopping ? 'stopping' : 'not running'}`);
    return true;
  };
  process.on('SIGTTIN', () => {
    if (ignored('SIGTTIN')) return;
    const added = pool.grow(1);
    if (added > 0) log.info({ signal: 'SIGTTIN', processes: pool.size }, `SIGTTIN: one more child (${pool.size})`);
    else
      log.warn(
        { signal: 'SIGTTIN', processes: pool.size, maxProcesses: pool.options.maxProcesses },
        'SIGTTIN: the pool is at its most children (maxProcesses): not grown',
      );
  });
  process.on('SIGTTOU', () => {
    if (ignored('SIGTTOU')) return;
    const gone = pool.shrink(1);
    if (gone > 0) log.info({ signal: 'SIGTTOU', processes: pool.size }, `SIGTTOU: one child fewer (${pool.size})`);
    else
      log.warn(
        { signal: 'SIGTTOU', processes: pool.size, autoscale: pool.autoscaleBounds },
        'SIGTTOU: no child to retire (none idle, at the autoscale min, or the last child of a fixed pool): not shrunk',
      );
  });
  process.on('SIGHUP', () => {
    if (ignored('SIGHUP')) return;
    log.info({ signal: 'SIGHUP' }, 'SIGHUP: reloading the task module: replacing the children one by one');
    void pool.reload().then((replaced) => {
      // A stop or a failure ends a reload early (logged on its own): "N replaced" would read as a reload done.
      if (pool.running) log.info({ signal: 'SIGHUP', replaced }, `SIGHUP: ${replaced} children replaced`);
      else log.debug({ signal: 'SIGHUP', replaced }, 'SIGHUP: the reload ended with the pool (stopped or failed)');
    });
  });
  process.on('SIGUSR1', () => logStats(worker, log));
  process.on('SIGTSTP', () => {
    if (worker.quiet())
      log.warn(
        { signal: 'SIGTSTP' },
        'SIGTSTP: quiet: fetching no more jobs; the jobs held run on (stop with SIGTERM)',
      );
  });
}

/** SIGUSR1: one line for the pool, one per child with the job it runs. */
function logStats(worker: Worker, log: Logger): void {
  const stats = worker.stats();
  const { pool } = stats;
  const live = pool.processes.filter((p) => p.state !== 'exited');
  log.info(
    {
      signal: 'SIGUSR1',
      nodeId: stats.nodeId,
      processes: live.length,
      busy: live.filter((p) => p.state === 'busy').length,
      reserved: pool.reserved,
      outbound: pool.outbound,
      totals: pool.totals,
      autoscale: pool.autoscale,
      paused: stats.paused,
      quiet: stats.quiet,
      consumer: stats.consumer,
    },
    `SIGUSR1: ${live.length} children, ${pool.reserved} jobs held, ${pool.totals.done} done, ${pool.totals.failed} failed`,
  );
  for (const p of live) {
    const job = p.current;
    log.info(
      {
        signal: 'SIGUSR1',
        childPid: p.pid,
        state: p.state,
        jobsDone: p.jobsDone,
        rss: p.rss,
        ...(job && { jobId: job.id, task: job.name, runtimeMs: job.runtime }),
      },
      job ? `child ${p.pid}: running ${job.name} ${job.id} for ${job.runtime} ms` : `child ${p.pid}: ${p.state}`,
    );
  }
}
