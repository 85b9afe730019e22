import type { NodeEvent } from '../events/node-event.js';
import { JobTrails } from './job-trails.js';
import { Runtimes } from './runtimes.js';

/**
 * What the dashboard learns from the events stream: outcomes counted
 * between two samples (throughput, failure rate), runtimes per task, and
 * the recent jobs' trails.
 */
export class EventTally {
  readonly runtimes = new Runtimes();
  readonly trails = new JobTrails();
  private succeeded = 0;
  private failed = 0;

  /** `counted`: false for events from before the dashboard started (their outcomes belong to no interval of its charts). */
  add(e: NodeEvent, counted: boolean): void {
    this.trails.add(e);
    if (e.type !== 'job-succeeded' && e.type !== 'job-failed') return;
    if (e.task !== undefined && e.runtimeMs !== undefined) this.runtimes.add(e.task, e.runtimeMs);
    if (!counted) return;
    if (e.type === 'job-succeeded') this.succeeded++;
    else this.failed++;
  }

  /** The outcomes counted since the last call. */
  take(): { succeeded: number; failed: number } {
    const out = { succeeded: this.succeeded, failed: this.failed };
    this.succeeded = 0;
    this.failed = 0;
    return out;
  }
}
