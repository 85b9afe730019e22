import type { Fifo } from '../util/fifo.js';
import type { JobArgs, PoolJob } from './job.js';
import type { WorkerProcess } from './worker-process.js';

/** One job the pool holds, as `Pool.jobs()` lists it. */
export interface PoolJobInfo {
  /** The job's id (ApplyOptions.id, else the pool's sequence number). */
  id: string;
  /** The task's name. */
  name: string;
  /** The queue it came from (ApplyOptions.queue), if given. */
  queue: string | undefined;
  /** Retries already spent (ApplyOptions.retries). */
  retries: number;
  /** The child it was written to; undefined while it waits in the outbound buffer. */
  pid: number | undefined;
  /** Epoch ms it started in its child; undefined while it has not started. */
  startedAt: number | undefined;
  /** Its arguments as given to apply(): an array, or msgpack bytes of one (not decoded here). */
  args: JobArgs;
}

/** The jobs a pool holds: running in a child, or applied and not started (in the outbound buffer or a child's pipe). */
export interface PoolJobs {
  /** Started in a child and not settled. */
  active: PoolJobInfo[];
  /** Applied and not started: in a child's pipe (pid set) or the outbound buffer. */
  reserved: PoolJobInfo[];
}

function info(job: PoolJob, pid: number | undefined): PoolJobInfo {
  return {
    id: job.id,
    name: job.name,
    queue: job.meta?.queue,
    retries: job.meta?.retries ?? 0,
    pid,
    startedAt: job.startedAt > 0 ? job.startedAt : undefined,
    args: job.args,
  };
}

/** O(jobs held): for inspection, never the hot path. */
export function listJobs(procs: readonly WorkerProcess[], outbound: Fifo<PoolJob>): PoolJobs {
  const out: PoolJobs = { active: [], reserved: [] };
  for (const proc of procs) {
    if (proc.state === 'exited') continue;
    proc.learnStarts();
    for (const job of proc.inFlight) {
      // A job cancelled while in a child's pipe stays listed there until the child gives it back.
      if (job.settled) continue;
      (job.startedAt > 0 ? out.active : out.reserved).push(info(job, proc.pid));
    }
  }
  for (const job of outbound) out.reserved.push(info(job, undefined));
  return out;
}
