/**
 * The memory a child's main thread shares with its watchdog thread. The main
 * thread writes, the watchdog reads: no message passing, so a busy main
 * thread costs the watchdog nothing and the watchdog never needs it.
 */

/** Int32 slots. */
export const BUSY = 0;
/** 1 while the watchdog sleeps until BUSY changes (the main thread then wakes it). */
export const PARKED = 1;
/** Never written: the watchdog's timed sleeps wait on it. */
export const NAP = 2;
export const INT32_SLOTS = 3;

/** While busy, how often the watchdog checks that the parent is still there. */
export const POLL_MS = 1_000;
/** How long past a job's hard limit the watchdog waits for the parent to kill the child before it does. */
export const HARD_LIMIT_GRACE_MS = 2_000;

export interface WatchdogData {
  /** INT32_SLOTS Int32 slots. */
  state: Int32Array;
  /** One BigInt64: the running job's deadline on the monotonic clock (process.hrtime.bigint()), 0n for none. */
  deadline: BigInt64Array;
  /** The pool's process (from the child's config). */
  parentPid: number;
  /** This child's parent pid at start: it changes (to 1 or a subreaper) once that parent is gone. */
  startPpid: number;
}
