/**
 * When a schedule entry's ticks fall, and what an entry does with the ticks
 * due at a given moment (misfires), computed from fixed clocks: a cron entry
 * in a zone with DST, across both of its changes.
 */
import { describe, expect, it } from 'vitest';
import { defineSchedule } from '../../../dist/index.js';
import { cronRule, everyRule, MISFIRE_ALL_MAX, MISFIRE_GRACE_MS, planTicks } from '../../../dist/schedule/ticks.js';

const at = (iso: string): number => new Date(iso).getTime();
const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The `n` ticks of a rule after `from`, as ISO strings. */
function ticks(rule: ReturnType<typeof cronRule>, from: number, n: number): string[] {
  const out: string[] = [];
  let t = from;
  for (let i = 0; i < n; i++) {
    t = rule.next(t) as number;
    out.push(iso(t) as string);
  }
  return out;
}

describe('cron in a time zone with DST (Europe/Berlin)', () => {
  it('02:30 daily: the day the clocks skip 02:00-03:00 it fires at the jump, then at 02:30 CEST', () => {
    const rule = cronRule('30 2 * * *', 'Europe/Berlin');
    expect(ticks(rule, at('2026-03-27T12:00:00Z'), 3)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST, the jump
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
  });

  it('02:30 daily: the day 02:00-03:00 happens twice it fires once, then at 02:30 CET', () => {
    const rule = cronRule('30 2 * * *', 'Europe/Berlin');
    expect(ticks(rule, at('2026-10-24T12:00:00Z'), 3)).toEqual([
      '2026-10-25T00:30:00.000Z', // the first 02:30 (CEST)
      '2026-10-26T01:30:00.000Z', // 02:30 CET
      '2026-10-27T01:30:00.000Z',
    ]);
  });

  it('hourly across the autumn change: one tick per real hour, none doubled or lost', () => {
    const rule = cronRule('0 * * * *', 'Europe/Berlin');
    expect(ticks(rule, at('2026-10-24T23:30:00Z'), 4)).toEqual([
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T02:00:00.000Z',
      '2026-10-25T03:00:00.000Z',
    ]);
  });

  it('the latest ticks at or before a moment, a tick at that moment included', () => {
    const rule = cronRule('30 2 * * *', 'Europe/Berlin');
    expect(rule.latest(at('2026-03-30T00:30:00Z'), 2).map(iso)).toEqual([
      '2026-03-30T00:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
    ]);
  });

  it('6 fields: seconds first', () => {
    const rule = cronRule('*/15 * * * * *', 'UTC');
    expect(ticks(rule, at('2026-01-01T00:00:00.000Z'), 2)).toEqual([
      '2026-01-01T00:00:15.000Z',
      '2026-01-01T00:00:30.000Z',
    ]);
  });
});

describe('every: multiples of the period since the epoch', () => {
  it('the next tick is strictly after; the latest at or before', () => {
    const rule = everyRule(30_000);
    expect(iso(rule.next(at('2026-01-01T00:00:00Z')))).toBe('2026-01-01T00:00:30.000Z');
    expect(iso(rule.next(at('2026-01-01T00:00:10Z')))).toBe('2026-01-01T00:00:30.000Z');
    expect(rule.latest(at('2026-01-01T00:01:00Z'), 2).map(iso)).toEqual([
      '2026-01-01T00:01:00.000Z',
      '2026-01-01T00:00:30.000Z',
    ]);
  });
});

describe('planTicks: what is due, and misfires', () => {
  const every = everyRule(1000);
  const last = at('2026-01-01T00:00:00Z');

  it('nothing before the next tick', () => {
    expect(planTicks(every, 'once', last, last + 999)).toBeUndefined();
  });

  it('the next tick alone, on time or late within the grace: it fires, whatever the misfire rule', () => {
    for (const misfire of ['once', 'skip', 'all'] as const) {
      expect(planTicks(every, misfire, last, last + 1000)).toEqual({ fire: [last + 1000], last: last + 1000 });
      expect(planTicks(cronRule('0 * * * *', 'UTC'), misfire, last, last + 3_600_000 + MISFIRE_GRACE_MS)).toEqual({
        fire: [last + 3_600_000],
        last: last + 3_600_000,
      });
    }
  });

  it("five ticks missed: 'once' fires the latest, 'skip' none, 'all' each; all move on to the latest", () => {
    const now = last + 5400;
    expect(planTicks(every, 'once', last, now)).toEqual({ fire: [last + 5000], last: last + 5000 });
    expect(planTicks(every, 'skip', last, now)).toEqual({ fire: [], last: last + 5000 });
    expect(planTicks(every, 'all', last, now)).toEqual({
      fire: [1, 2, 3, 4, 5].map((i) => last + i * 1000),
      last: last + 5000,
    });
  });

  it('one tick missed by more than the grace is a misfire', () => {
    const hourly = everyRule(3_600_000);
    const now = last + 3_600_000 + MISFIRE_GRACE_MS + 1;
    expect(planTicks(hourly, 'skip', last, now)).toEqual({ fire: [], last: last + 3_600_000 });
    expect(planTicks(hourly, 'once', last, now)).toEqual({ fire: [last + 3_600_000], last: last + 3_600_000 });
  });

  it("'all' catches up the latest ticks up to its bound", () => {
    const plan = planTicks(every, 'all', last, last + 1000 * (MISFIRE_ALL_MAX + 50));
    expect(plan?.fire).toHaveLength(MISFIRE_ALL_MAX);
    expect(plan?.fire[0]).toBe(last + 1000 * 51);
    expect(plan?.last).toBe(last + 1000 * (MISFIRE_ALL_MAX + 50));
  });

  it('a cron entry across the spring change misses its jump tick: once fires it', () => {
    const s = defineSchedule({ nightly: { task: 't', cron: '30 2 * * *', tz: 'Europe/Berlin' } });
    const entry = s.entries.get('nightly');
    const before = at('2026-03-28T01:30:00Z');
    expect(planTicks(entry!.rule, 'once', before, at('2026-03-29T05:00:00Z'))).toEqual({
      fire: [at('2026-03-29T01:00:00Z')],
      last: at('2026-03-29T01:00:00Z'),
    });
  });
});
