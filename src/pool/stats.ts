import type { StrategyName } from './options.js';
import type { ProcessState, WorkerProcess } from './worker-process.js';

export interface ProcessStats {
  pid: number;
  state: ProcessState;
  jobsDone: number;
  /** The job the child is running now (ACKed, not settled). */
  current: { id: string; name: string; runtime: number } | null;
  /** Resident set size in bytes (from /proc, else the child's last report). */
  rss: number | undefined;
}

/** Counters over the pool's life. `lost` counts jobs whose child died under them; `restarts`, unplanned replacements. */
export interface PoolTotals {
  applied: number;
  done: number;
  failed: number;
  lost: number;
  restarts: number;
}

export interface PoolStats {
  processes: ProcessStats[];
  totals: PoolTotals;
  /** Reserved requests: jobs applied and not yet settled (buffered or in a child); what the Autoscaler sizes the pool from. */
  reserved: number;
  /** Jobs waiting in the outbound buffer for a child. */
  outbound: number;
  strategy: StrategyName;
  autoscale: { max: number; min: number } | undefined;
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
        current: job ? { id: job.id, name: job.name, runtime: now - job.startedAt } : null,
        rss: proc.readRss(),
      };
    }),
    totals,
    ...rest,
  };
}
