import { SHARE_ENV, Worker } from 'node:worker_threads';
import { BUSY, HARD_LIMIT_GRACE_MS, INT32_SLOTS, PARKED, type WatchdogData } from './watchdog-shared.js';

const THREAD = new URL('./watchdog-thread.js', import.meta.url);

/**
 * The main thread's handle on the watchdog thread (watchdog-thread.ts): it
 * says when a job runs and, if the job has a hard limit, when that passes.
 * Each call is a store or two to shared memory; the thread is woken only when
 * it is parked and a job starts.
 *
 * A child the kernel kills with its parent (`deathSignal`, death-signal.ts)
 * needs the thread only as the hard limit's backstop: it starts at the first
 * job with a hard limit, and an idle child or one running jobs without limits
 * carries no thread at all.
 */
export class Watchdog {
  private readonly state = new Int32Array(new SharedArrayBuffer(INT32_SLOTS * 4));
  private readonly deadline = new BigInt64Array(new SharedArrayBuffer(8));
  private armed = false;
  private started = false;

  constructor(
    private readonly parentPid: number,
    deathSignal: boolean,
  ) {
    if (!deathSignal) this.start();
  }

  /** Comes up on its own thread, even when the job that follows blocks this one at once. */
  private start(): void {
    this.started = true;
    const data: WatchdogData = {
      state: this.state,
      deadline: this.deadline,
      parentPid: this.parentPid,
      startPpid: process.ppid,
    };
    const thread = new Worker(THREAD, {
      workerData: data,
      stdout: false,
      stderr: false,
      env: SHARE_ENV,
      // It allocates next to nothing: a small heap saves about 1 MiB of RSS per child.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8, codeRangeSizeMb: 2, stackSizeMb: 1 },
    });
    // Without its watchdog a child still works; the EOF on stdin still ends an idle one.
    thread.on('error', (err) =>
      process.stderr.write(`prefork child ${process.pid}: watchdog failed: ${String(err)}\n`),
    );
    thread.unref();
  }

  /** A job starts; `timeLimit` is its hard limit in ms, if it has one. */
  jobStarted(timeLimit: number | undefined): void {
    if (timeLimit !== undefined && Number.isFinite(timeLimit)) {
      if (!this.started) this.start();
      const ns = BigInt(Math.ceil(timeLimit) + HARD_LIMIT_GRACE_MS) * 1_000_000n;
      Atomics.store(this.deadline, 0, process.hrtime.bigint() + ns);
      this.armed = true;
    } else if (this.armed) {
      Atomics.store(this.deadline, 0, 0n);
      this.armed = false;
    }
    if (Atomics.load(this.state, BUSY) === 1) return;
    Atomics.store(this.state, BUSY, 1);
    if (Atomics.load(this.state, PARKED) === 1) Atomics.notify(this.state, BUSY);
  }

  /** Nothing runs: the event loop is free again and sees the parent's EOF by itself. */
  idle(): void {
    if (this.armed) {
      Atomics.store(this.deadline, 0, 0n);
      this.armed = false;
    }
    Atomics.store(this.state, BUSY, 0);
  }
}
