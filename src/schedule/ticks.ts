import { Cron } from 'croner';

/** What a schedule entry does with the ticks it missed while no node ran (or the broker was away). */
export type Misfire = 'once' | 'skip' | 'all';

/**
 * When a schedule entry's ticks fall, as epoch ms on the broker's clock:
 * `every` at whole multiples of it since the epoch (so every node agrees),
 * `cron` as croner reads the expression in its time zone (a time skipped by
 * DST fires at the jump, a time repeated fires once, as Vixie cron).
 */
export interface TickRule {
  /** The first tick strictly after `after`, or undefined when there is none (a cron that never matches again). */
  next(after: number): number | undefined;
  /** Up to `n` of the latest ticks at or before `atOrBefore`, newest first. */
  latest(atOrBefore: number, n: number): number[];
}

export function everyRule(every: number): TickRule {
  return {
    next: (after) => (Math.floor(after / every) + 1) * every,
    latest: (at, n) => {
      const last = Math.floor(at / every) * every;
      return Array.from({ length: n }, (_, i) => last - i * every);
    },
  };
}

/** Throws croner's error when the expression does not parse. */
export function cronRule(expression: string, tz: string): TickRule {
  const cron = new Cron(expression, { timezone: tz, paused: true });
  // Validates the time zone as well: croner converts lazily.
  cron.nextRun(new Date(0));
  return {
    next: (after) => cron.nextRun(new Date(after))?.getTime(),
    // previousRuns is strictly before its reference: a millisecond past `at` includes a tick at `at`.
    latest: (at, n) => cron.previousRuns(n, new Date(at + 1)).map((d) => d.getTime()),
  };
}

/**
 * A tick this late is a misfire even when it is the only one pending (the
 * node stalled or the broker was away): `skip` drops it.
 */
export const MISFIRE_GRACE_MS = 60_000;
/** Most ticks `misfire: 'all'` catches up (the latest ones). */
export const MISFIRE_ALL_MAX = 100;

/** What one entry does now: enqueue a job per tick of `fire`, and record `last` as the latest tick handled. */
export interface TickPlan {
  fire: number[];
  last: number;
}

/**
 * The ticks due at `now` after `last` (the latest tick handled): the next
 * one alone and on time fires; otherwise they were missed, and `misfire`
 * decides. Undefined when nothing is due.
 */
export function planTicks(rule: TickRule, misfire: Misfire, last: number, now: number): TickPlan | undefined {
  const next = rule.next(last);
  if (next === undefined || next > now) return undefined;
  const [latest = next] = rule.latest(now, 1);
  if (latest === next && now - next <= MISFIRE_GRACE_MS) return { fire: [next], last: next };
  if (misfire === 'skip') return { fire: [], last: latest };
  if (misfire === 'once') return { fire: [latest], last: latest };
  const missed = rule.latest(now, MISFIRE_ALL_MAX).filter((t) => t > last);
  return { fire: missed.reverse(), last: latest };
}
