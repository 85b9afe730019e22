/**
 * Every duration typed on the command line carries its unit: a bare number
 * is seconds to someone from Celery or Sidekiq and milliseconds to the
 * library, so each duration flag refuses it (only 0 may go without) and says
 * how to write either. The library's options keep taking numbers of ms.
 */
import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import * as parse from '../../../dist/cli/parsers.js';

/** Each duration flag's parser, by the flags that use it. */
const PARSERS: [string, (value: string) => number][] = [
  ['--delay', parse.delay],
  ['--time-limit, --soft-time-limit', parse.timeLimit],
  ['--timeout, --interval', parse.timerDuration],
  ['--grace', parse.waitDuration],
  ['--unique-ttl', parse.expiry],
  ['--lease', parse.lease],
  ['--result-ttl', parse.resultTtl],
];

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return (err as Error).message;
  }
  throw new Error('not refused');
}

describe('duration flags', () => {
  it.each(PARSERS)('%s: a bare number is refused, naming both spellings', (_flags, parser) => {
    for (const bare of ['86400', ' 300 ', '1.5', '30000']) {
      const message = refusal(() => parser(bare));
      expect(message).toContain(`${bare.trim()}s for seconds`);
      expect(message).toContain(`${bare.trim()}ms for milliseconds`);
    }
  });

  it.each(PARSERS)('%s: a duration with its unit is taken, in ms', (_flags, parser) => {
    expect(parser('30s')).toBe(30_000);
    expect(parser('1500ms')).toBe(1500);
    expect(parser(' 2m ')).toBe(120_000);
  });

  it('a bare 0 needs no unit where 0 is allowed, and is refused by the range where it is not', () => {
    expect(parse.delay('0')).toBe(0);
    expect(parse.waitDuration('0')).toBe(0);
    const message = refusal(() => parse.expiry('0'));
    expect(message).toContain('a positive duration');
    // The range refuses it, not the bare-number rule ("0s for seconds or 0ms ...").
    expect(message).not.toContain('for seconds');
  });

  it('text that is no duration keeps its own message', () => {
    expect(refusal(() => parse.delay('soon'))).toContain('a duration >= 0');
    expect(refusal(() => parse.lease('10ms'))).toMatch(/1 ?s/);
  });

  it('--backoff: a DELAY or CAP typed as text carries its unit; a JSON number stays ms', () => {
    expect(refusal(() => parse.backoff('fixed:5000'))).toContain('delay to be a duration with its unit: 5000s');
    expect(refusal(() => parse.backoff('exponential:1s:600'))).toContain('cap to be a duration with its unit: 600s');
    expect(refusal(() => parse.backoff('{"type":"fixed","delay":"5000"}'))).toContain('5000ms for milliseconds');
    expect(parse.backoff('exponential:1s:10m')).toMatchObject({ type: 'exponential', delay: 1000, cap: 600_000 });
    expect(parse.backoff('fixed:0')).toMatchObject({ type: 'fixed', delay: 0 });
    expect(parse.backoff('{"type":"fixed","delay":5000}')).toMatchObject({ type: 'fixed', delay: 5000 });
  });
});
