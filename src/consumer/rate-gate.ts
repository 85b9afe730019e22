import type { Logger } from 'pino';
import type { BrokerRateLimits, Delivery, JobRecord, SlotRequest } from '../broker/types.js';
import { DEFAULT_RATE, rateSetting } from '../broker/rate-setting.js';
import type { TaskOptions } from '../job-types.js';
import { parseRate } from '../util/units.js';

/** A fetched job whose start a rate limit governs, and the interval the node would space it by. */
export interface Limited {
  readonly delivery: Delivery;
  readonly intervalMs: number;
}

/** What the buckets said: jobs to start now, and jobs to defer to their turn. */
export interface Admission {
  readonly start: Delivery[];
  /** `slot`: the delay is the job's turn (it starts then without asking again); else it asks again then. */
  readonly wait: { delivery: Delivery; delay: number; slot: boolean }[];
}

/** When the buckets cannot be asked (the broker away), the jobs wait this long and ask again. */
const ASK_AGAIN_MS = 1_000;
/**
 * A job that holds its turn starts if it comes at most this late (or one
 * interval, if longer); later, it asks for a new turn.
 */
const LATE_MS = 100;
/** Rate texts parsed (job options repeat a few values): the bound only guards memory. */
const PARSED_CACHED = 1_000;

/**
 * The node's side of cluster-wide rate limits (docs/architecture.md, "Rate
 * limits"): which fetched jobs a limit governs (a rate set at run time, else
 * the job's own `rateLimit`, else its task's), and one bucket request per
 * fetched batch for them. Jobs no limit governs cost one Map lookup here.
 */
export class RateGate {
  /** Rates set at run time, by task: ms between starts (0: off). */
  private readonly setAtRunTime = new Map<string, number>();
  private readonly parsed = new Map<string, number | undefined>();

  constructor(
    private readonly broker: BrokerRateLimits,
    private readonly taskOptions: (task: string) => TaskOptions | undefined,
    private readonly log: Logger,
  ) {}

  /**
   * The ms between starts this job must keep, or undefined when no limit
   * governs it (or it holds its turn, come now). Undefined too for an own
   * rateLimit that is not one: the Consumer's badOptions() dead-letters it.
   */
  intervalOf(job: JobRecord): number | undefined {
    const interval = this.limitOf(job);
    if (interval === undefined || job.rateSlot === undefined) return interval;
    // Its turn, unless every node was busy when it came: then it asks again, so a stall never releases a burst.
    return Date.now() - job.rateSlot <= Math.max(interval, LATE_MS) ? undefined : interval;
  }

  private limitOf(job: JobRecord): number | undefined {
    if (this.setAtRunTime.size > 0) {
      const set = this.setAtRunTime.get(job.task);
      if (set !== undefined) return set > 0 ? set : undefined;
    }
    const own = job.options.rateLimit;
    if (own !== undefined) return this.interval(own);
    const rate = this.taskOptions(job.task)?.rateLimit;
    return rate === undefined ? undefined : this.interval(rate);
  }

  /** Follows a rate set at run time ("100/s", "off", or "default": the override dropped); OptionError for a bad one. */
  follow(task: string, rate: string): { task: string; rateLimit: string } {
    const setting = rateSetting(task, rate);
    if (setting === undefined) {
      this.setAtRunTime.delete(task);
      return { task, rateLimit: DEFAULT_RATE };
    }
    this.setAtRunTime.set(task, setting.interval);
    return { task, rateLimit: setting.text };
  }

  /** Reads the rates set at run time (at start, and after re-registering: one dropped meanwhile goes here too). */
  async load(): Promise<void> {
    this.apply(await this.broker.rateLimits());
  }

  /** Follows the rates set at run time as the broker holds them (task -> rate): the ones not among them drop. Whether any changed. */
  apply(all: ReadonlyMap<string, string>): boolean {
    const before = new Map(this.setAtRunTime);
    this.setAtRunTime.clear();
    for (const [task, rate] of all) {
      try {
        this.follow(task, rate);
      } catch (err) {
        this.log.warn({ err, task }, 'ignored a rate limit set at run time that this node cannot read');
      }
    }
    return (
      before.size !== this.setAtRunTime.size ||
      [...before].some(([task, interval]) => this.setAtRunTime.get(task) !== interval)
    );
  }

  /**
   * Asks the buckets for a start per job, one request per task and
   * interval, in one round trip. A job whose turn is now starts; the others
   * wait in the broker for theirs. If the broker cannot be asked, every job
   * waits ASK_AGAIN_MS and asks again.
   */
  async admit(limited: readonly Limited[]): Promise<Admission> {
    const groups = new Map<string, { request: SlotRequest; members: Delivery[] }>();
    for (const { delivery, intervalMs } of limited) {
      const key = `${intervalMs} ${delivery.job.task}`;
      const group = groups.get(key);
      if (group === undefined)
        groups.set(key, { request: { task: delivery.job.task, intervalMs, count: 1 }, members: [delivery] });
      else {
        group.request.count++;
        group.members.push(delivery);
      }
    }
    const list = [...groups.values()];
    const admission: Admission = { start: [], wait: [] };
    let grants;
    try {
      grants = await this.broker.acquireSlots(list.map((g) => g.request));
    } catch (err) {
      this.log.warn(
        { err, jobs: limited.length },
        'could not ask the rate-limit buckets; those jobs ask again shortly',
      );
      for (const { delivery } of limited) admission.wait.push({ delivery, delay: ASK_AGAIN_MS, slot: false });
      return admission;
    }
    list.forEach(({ request, members }, i) => {
      const grant = grants[i];
      if (grant === undefined) {
        for (const delivery of members) admission.wait.push({ delivery, delay: ASK_AGAIN_MS, slot: false });
        return;
      }
      if (grant.override !== undefined) this.followQuietly(request.task, grant.override);
      members.forEach((delivery, k) => {
        const delay = grant.firstDelayMs + k * grant.intervalMs;
        if (delay <= 0) admission.start.push(delivery);
        else admission.wait.push({ delivery, delay, slot: true });
      });
    });
    return admission;
  }

  private followQuietly(task: string, rate: string): void {
    try {
      this.follow(task, rate);
    } catch {
      // Another version's setting: the bucket applied it anyway.
    }
  }

  private interval(rate: string): number | undefined {
    if (this.parsed.has(rate)) return this.parsed.get(rate);
    if (this.parsed.size >= PARSED_CACHED) this.parsed.clear();
    const interval = parseRate(rate)?.intervalMs;
    this.parsed.set(rate, interval);
    return interval;
  }
}
