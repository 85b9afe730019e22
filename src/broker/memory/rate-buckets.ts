import type { SlotGrant, SlotRequest } from '../types.js';
import { rateSetting } from '../rate-setting.js';
import type { MemoryQueue } from './memory-queue.js';

/**
 * The memory twin of the Redis rate limits (acquireSlots-n.lua,
 * setRateLimit-n.lua): a GCRA bucket per task, and the rates set at run time.
 */
export class RateBuckets {
  /** Per task: when its next start is due (epoch ms). */
  private readonly tat = new Map<string, number>();
  /** Per task: the rate set at run time, as an interval (0 = off) and its text. */
  private readonly set = new Map<string, { interval: number; text: string }>();

  acquire(requests: readonly SlotRequest[], now: number): SlotGrant[] {
    return requests.map(({ task, intervalMs, count }) => {
      const setting = this.set.get(task);
      const interval = setting?.interval ?? intervalMs;
      if (interval <= 0) return { firstDelayMs: 0, intervalMs: 0, override: setting?.text };
      const first = Math.max(now, this.tat.get(task) ?? 0);
      this.tat.set(task, first + Math.max(1, Math.floor(count)) * interval);
      return { firstDelayMs: first - now, intervalMs: interval, override: setting?.text };
    });
  }

  list(): Map<string, string> {
    return new Map([...this.set].map(([task, s]) => [task, s.text]));
  }

  /** Sets a task's rate and spaces again its jobs waiting their turn, in the order of their turns; returns how many. */
  setRate(
    queues: readonly [string, MemoryQueue][],
    task: string,
    rate: string,
    now: number,
    touched: Set<string>,
  ): number {
    const setting = rateSetting(task, rate);
    // "default": the override goes; the jobs waiting keep the turns they hold (as on Redis).
    if (setting === undefined) {
      this.set.delete(task);
      return 0;
    }
    this.set.set(task, setting);
    const waiting = queues
      .flatMap(([name, q]) =>
        q.takeDelayed((d) => d.job.task === task && d.rateLimited === true).map((d) => ({ name, q, d })),
      )
      .sort((a, b) => a.d.dueAt - b.d.dueAt);
    waiting.forEach(({ name, q, d }, i) => {
      const dueAt = setting.interval > 0 ? Math.ceil(now + i * setting.interval) : now;
      q.addDelayed({ dueAt, job: { ...d.job, rateSlot: dueAt }, rateLimited: true });
      touched.add(name);
    });
    if (setting.interval > 0) this.tat.set(task, now + waiting.length * setting.interval);
    else this.tat.delete(task);
    return waiting.length;
  }
}
