import type { StrategyName } from './options.js';
import type { ProcessState, WorkerProcess } from './worker-process.js';

/** One child as `Pool.stats()` shows it. */
export interface ProcessStats {
  /** The child's process id. */
  pid: number;
  /** 'starting' (loading the task module), 'idle', 'busy', 'stopping' (told to exit) or 'exited'. */
  state: ProcessState;
  /** Jobs the child has settled (succeeded or failed). */
  jobsDone: number;
  /** Jobs written to the child and not settled: the one it runs, and those it holds ahead (fcfs; fair with short jobs). */
  held: number;
  /** The job the child is running now (started, not settled), or null. */
  current: {
    /** The job's id. */
    id: string;
    /** The task's name. */
    name: string;
    /** Ms since it started. */
    runtime: number;
  } | null;
  /** Resident set size in bytes (from /proc, else the child's last report). */
  rss: number | undefined;
  /** Reads of what the child sent: each woke the parent once (a short job costs one, for its RESULT). */
  reads: number;
}

/** Counters over the pool's life. */
export interface PoolTotals {
  /** Jobs given to apply() (and accepted). */
  applied: number;
  /** Jobs that resolved. */
  done: number;
  /** Jobs that rejected, lost ones included (withdrawn ones are not failures). */
  failed: number;
  /** Jobs whose child died under them (WorkerLostError, TimeLimitExceeded). */
  lost: number;
  /** Unplanned replacements: children that died, or that the pool killed (time limit, protocol error). */
  restarts: number;
}

/** A snapshot of the pool: `Pool.stats()`. */
export interface PoolStats {
  /** Every child the pool has now. */
  processes: ProcessStats[];
  /** Counters over the pool's life. */
  totals: PoolTotals;
  /** Reserved requests: jobs applied and not yet settled (buffered or in a child); what the Autoscaler sizes the pool from. */
  reserved: number;
  /** Jobs waiting in the outbound buffer for a child. */
  outbound: number;
  /** The scheduling strategy (the `strategy` option). */
  strategy: StrategyName;
  /** The autoscale bounds now (they change with `setAutoscale`), or undefined for a fixed pool. */
  autoscale:
    | {
        /** The most children. */
        max: number;
        /** The fewest children. */
        min: number;
      }
    | undefined;
}

export function collectStats(
  procs: readonly WorkerProcess[],
  totals: PoolTotals,
  rest: Omit<PoolStats, 'processes' | 'totals'>,
): PoolStats {
  const now = Date.now();
  return {
    processes: procs.map((proc) => {
      const job = proc.running;
      return {
        pid: proc.pid,
        state: proc.state,
        jobsDone: proc.jobsDone,
        held: proc.inFlight.length,
        current: job ? { id: job.id, name: job.name, runtime: now - job.startedAt } : null,
        rss: proc.readRss(),
        reads: proc.reads,
      };
    }),
    totals,
    ...rest,
  };
}
