/** defineSchedule: what it accepts, and the error it throws for each bad entry (naming the entry and the problem). */
import { describe, expect, it } from 'vitest';
import { defineSchedule, OptionError } from '../../../dist/index.js';
import { entryFromDefinition } from '../../../dist/schedule/define.js';

describe('defineSchedule', () => {
  it('checks and keeps each entry: every in ms, cron in UTC unless a zone is given, misfire once by default', () => {
    const s = defineSchedule({
      often: { task: 'ping', every: '30s' },
      nightly: { task: 'report', args: [1, 'x'], cron: '0 3 * * *', tz: 'Europe/Berlin', misfire: 'skip' },
      seconds: { task: 'ping', cron: '*/10 * * * * *', options: { queue: 'low', retries: 2, timeLimit: '1m' } },
    });
    expect([...s.entries.keys()]).toEqual(['often', 'nightly', 'seconds']);
    expect(s.entries.get('often')).toMatchObject({ task: 'ping', every: 30_000, misfire: 'once', queue: 'default' });
    expect(s.entries.get('nightly')).toMatchObject({ cron: '0 3 * * *', tz: 'Europe/Berlin', misfire: 'skip' });
    expect(s.entries.get('seconds')).toMatchObject({
      tz: 'UTC',
      queue: 'low',
      options: { retries: 2, timeLimit: 60_000 },
    });
  });

  it('the same definition has the same hash; a change of args changes it', () => {
    const a = defineSchedule({ e: { task: 't', args: [1], every: 1000 } }).entries.get('e');
    const b = defineSchedule({ e: { args: [1], every: 1000, task: 't' } }).entries.get('e');
    const c = defineSchedule({ e: { task: 't', args: [2], every: 1000 } }).entries.get('e');
    expect(a?.hash).toBe(b?.hash);
    expect(c?.hash).not.toBe(a?.hash);
  });

  it('a stored definition reads back as the same entry (another node adopts it)', () => {
    const a = defineSchedule({
      e: { task: 't', args: [1, { k: 'v' }], cron: '0 3 * * *', tz: 'Asia/Tokyo' },
    }).entries.get('e');
    const back = entryFromDefinition('e', a!.definition);
    expect(back).toMatchObject({ task: 't', cron: '0 3 * * *', tz: 'Asia/Tokyo', hash: a!.hash });
    expect(back.rule.next(0)).toBe(a!.rule.next(0));
    expect(() => entryFromDefinition('e', '{"task":1}')).toThrow(/stored schedule entry "e"/);
  });

  it('a stored definition another program wrote is checked as defineSchedule checks an entry', () => {
    const stored = JSON.parse(
      defineSchedule({ e: { task: 't', every: '5s', options: { timeLimit: '1m' } } }).entries.get('e')!.definition,
    ) as Record<string, unknown>;
    const cron = JSON.parse(
      defineSchedule({ e: { task: 't', cron: '0 3 * * *' } }).entries.get('e')!.definition,
    ) as Record<string, unknown>;
    const read = (changed: Record<string, unknown>, base = stored): (() => unknown) => {
      return () => entryFromDefinition('e', JSON.stringify({ ...base, ...changed }));
    };
    expect(read({})()).toMatchObject({ every: 5000, options: { timeLimit: 60_000 } });
    expect(read({ every: 1 })).toThrow(/stored schedule entry "e": invalid option every: 1 \(expected at least 1 s\)/);
    expect(read({ every: 1500.5 })).toThrow(/invalid option every: 1500.5 \(expected whole milliseconds\)/);
    expect(read({ every: -5000 })).toThrow(/invalid option every/);
    expect(read({ queue: '' })).toThrow(/stored schedule entry "e": invalid option queue/);
    expect(read({ options: { timeLimit: -1 } })).toThrow(/stored schedule entry "e": invalid option timeLimit/);
    expect(read({ options: { retries: -1 } })).toThrow(/invalid option retries/);
    expect(read({ tz: 'Mars/Olympus' }, cron)).toThrow(/invalid option tz: "Mars\/Olympus"/);
    expect(read({ cron: '0 0 30 2 *' }, cron)).toThrow(/invalid option cron: .*never does/);
    // The task and the arguments too: each tick's job would go straight to the dead set, unrun.
    expect(read({ task: '' })).toThrow(/stored schedule entry "e": invalid option task: "" \(expected a task name\)/);
    expect(read({ payload: '%%%' })).toThrow(
      /invalid option payload: "%%%" \(expected base64 of the msgpack arguments\)/,
    );
    expect(read({ payload: '' })).toThrow(/invalid option payload: "" \(expected base64 of the msgpack arguments/);
    // msgpack of 3, and of "x": not an array of arguments.
    expect(read({ payload: 'Aw==' })).toThrow(/invalid option payload: "Aw==" \(expected base64 of a msgpack array/);
    expect(read({ payload: 'oXg=' })).toThrow(/invalid option payload: "oXg=" \(expected base64 of a msgpack array/);
    expect(read({ payload: Buffer.from([0x92, 1]).toString('base64') })).toThrow(/invalid option payload/);
  });

  it.each([
    [
      { task: 't', cron: '61 * * * *' },
      /entry "bad": invalid option cron: "61 \* \* \* \*" \(expected a cron expression that parses/,
    ],
    [{ task: 't', cron: 'not a cron' }, /entry "bad": invalid option cron/],
    [
      { task: 't', cron: '* * * *' },
      /entry "bad": invalid option cron: "\* \* \* \*" \(expected a cron expression of 5 fields, or 6/,
    ],
    [{ task: 't', cron: '0 0 * * * * *' }, /entry "bad": invalid option cron/],
    // Dates no year has: they parse, and would never fire.
    [{ task: 't', cron: '0 0 30 2 *' }, /entry "bad": invalid option cron: "0 0 30 2 \*" \(expected .*never does/],
    [{ task: 't', cron: '0 12 31 4 *', tz: 'Europe/Berlin' }, /entry "bad": invalid option cron: .*never does/],
    [
      { task: 't', cron: '0 3 * * *', tz: 'Mars/Olympus' },
      /entry "bad": invalid option tz: "Mars\/Olympus" \(expected an IANA time zone/,
    ],
    [
      { task: 't', every: '1m', cron: '0 3 * * *' },
      /entry "bad": invalid option every: "1m" \(expected exactly one of every and cron \(cron is given too\)/,
    ],
    [
      { task: 't' },
      /entry "bad": invalid option every: undefined \(expected exactly one of every and cron \(neither is given\)/,
    ],
    [{ task: 't', every: 999 }, /entry "bad": invalid option every: 999 \(expected at least 1 s/],
    [{ task: 't', every: '500ms' }, /entry "bad": invalid option every: "500ms" \(expected at least 1 s/],
    [{ task: 't', every: 'soon' }, /entry "bad": invalid option every/],
    [{ task: 't', every: '1s', tz: 'UTC' }, /entry "bad": invalid option tz/],
    [{ every: '1s' }, /entry "bad": invalid option task/],
    [{ task: 't', every: '1s', misfire: 'later' }, /entry "bad": invalid option misfire/],
    [{ task: 't', every: '1s', args: 'x' }, /entry "bad": invalid option args/],
    [{ task: 't', every: '1s', options: { delay: 5 } }, /entry "bad": invalid option options.delay/],
    [{ task: 't', every: '1s', options: { queue: 'a:b' } }, /entry "bad": invalid option options.queue/],
    [{ task: 't', every: '1s', crons: '' }, /entry "bad": invalid option crons/],
  ])('refuses %j', (entry, message) => {
    const define = (): unknown => defineSchedule({ bad: entry as never });
    expect(define).toThrow(OptionError);
    expect(define).toThrow(message);
  });

  it('refuses a name that cannot be a key, and what is not an object of entries', () => {
    expect(() => defineSchedule({ 'a b': { task: 't', every: '1s' } })).toThrow(/entry "a b": invalid option name/);
    expect(() => defineSchedule([] as never)).toThrow(OptionError);
  });
});
