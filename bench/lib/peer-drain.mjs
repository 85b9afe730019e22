// The report of a peer's drain (BullMQ, bee-queue): rates, Redis commands per
// job, and the check that every job completed once with the right results
// and nothing is left waiting, running or failed in the queue.
import { report } from './child.mjs';
import { commandDelta } from './redis.mjs';

/**
 * `seen`: { count, sum, ids, failed } from the worker's completion events;
 * `clockJobs`: the jobs the clock counted (all of them unless it started late: B2's steady state);
 * `counts`: { waiting, active, failed } of the queue afterwards (`after` is
 * shown as the peer reports it); `c0`..`c3`: command counts before/after the
 * enqueue and before/after the drain.
 */
export function reportPeerDrain({
  jobs,
  clockJobs = jobs,
  t0,
  t1,
  enqueueMs,
  c0,
  c1,
  c2,
  c3,
  seen,
  expectedSum,
  counts,
  after,
  verb,
}) {
  const workerCmds = commandDelta(c2, c3);
  const producerCmds = commandDelta(c0, c1);
  const ok =
    seen.count === jobs &&
    seen.ids.size === jobs &&
    seen.sum === expectedSum &&
    counts.waiting === 0 &&
    counts.active === 0 &&
    counts.failed === 0;
  report({
    jobsPerSec: (clockJobs / (t1 - t0)) * 1000,
    wallMs: t1 - t0,
    clockJobs,
    enqueuePerSec: (jobs / enqueueMs) * 1000,
    workerCmdsPerJob: workerCmds.total / jobs,
    producerCmdsPerJob: producerCmds.total / jobs,
    workerCommands: workerCmds.byCommand,
    producerCommands: producerCmds.byCommand,
    count: seen.count,
    ok,
    check: `${verb} ${seen.count}/${jobs}, distinct ids ${seen.ids.size}, failed ${seen.failed}, sum ${seen.sum === expectedSum ? 'right' : 'WRONG'}, queue after: ${JSON.stringify(after)}`,
  });
}
