import { MessageType } from '../protocol/messages.js';
import type { ParentChannel } from './channel.js';

/**
 * At most one PROGRESS frame per job per this many ms: a task that reports
 * in a tight loop costs the pipe, the parent and Redis a few writes a second.
 */
export const PROGRESS_INTERVAL_MS = 250;

/**
 * One job's `currentTask().progress(value)`: the first report goes at once,
 * later ones at most every PROGRESS_INTERVAL_MS, each replacing the one
 * still waiting; the last one always goes (with the job's RESULT at the latest).
 */
export class JobProgress {
  private lastSentAt = -Infinity;
  private pending: Buffer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly seq: number,
    private readonly channel: ParentChannel,
  ) {}

  /** Throws (to the task) what encoding throws: a value msgpack cannot carry, or one too large for a frame. */
  report(value: unknown): void {
    if (this.ended) return;
    const frame = this.channel.encode([MessageType.PROGRESS, this.seq, value]);
    const wait = this.lastSentAt + PROGRESS_INTERVAL_MS - Date.now();
    if (wait <= 0 && this.timer === undefined) {
      this.send(frame);
      return;
    }
    this.pending = frame;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const last = this.pending;
      this.pending = undefined;
      if (last !== undefined) this.send(last);
    }, wait);
  }

  /** The job ends: the report still waiting is queued now, ahead of its RESULT. Later reports are dropped. */
  end(): void {
    this.ended = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending !== undefined) this.channel.sendFrame(this.pending);
    this.pending = undefined;
  }

  private send(frame: Buffer): void {
    this.lastSentAt = Date.now();
    this.channel.sendFrame(frame);
    this.channel.flush();
  }
}
