/**
 * A child's watchdog, on its own thread so that it runs while the main thread
 * is stuck in a task's busy loop (which never reads the EOF that says the
 * parent is gone). Parked while the child is idle; while a job runs it checks
 * every POLL_MS that the parent is still there, and kills the process when the
 * parent is gone or the job's hard limit has long passed.
 */
import { writeSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { BUSY, NAP, PARKED, POLL_MS, type WatchdogData } from './watchdog-shared.js';

const { state, deadline, parentPid, startPpid } = workerData as WatchdogData;

/**
 * Reparented (the usual sign), or the pool's process no longer exists: the
 * latter also covers a parent that died before this child started, or a
 * wrapper between them (execPath).
 */
function parentGone(): boolean {
  if (process.ppid !== startPpid) return true;
  try {
    process.kill(parentPid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function die(why: string): never {
  // Straight to fd 2: this thread's process.stderr goes through the main thread, which is stuck.
  writeSync(2, `prefork child ${process.pid}: ${why}; killing itself\n`);
  // From a thread, process.exit() would end only the thread.
  process.kill(process.pid, 'SIGKILL');
  for (;;) Atomics.wait(state, NAP, 0);
}

for (;;) {
  if (Atomics.load(state, BUSY) === 0) {
    Atomics.store(state, PARKED, 1);
    Atomics.wait(state, BUSY, 0);
    Atomics.store(state, PARKED, 0);
    continue;
  }
  if (parentGone()) die(`its parent (pid ${parentPid}) is gone`);
  const due = Atomics.load(deadline, 0);
  let nap = POLL_MS;
  if (due !== 0n) {
    const left = due - process.hrtime.bigint();
    if (left <= 0n) die('the running job is past its hard time limit and the parent has not killed it');
    nap = Math.min(nap, Number(left / 1_000_000n) + 1);
  }
  Atomics.wait(state, NAP, 0, nap);
}
