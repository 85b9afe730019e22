import { describe, expect, it } from 'vitest';
import {
  checkInteger,
  MAX_PROCESSES,
  MAX_TIMER_MS,
  parseAutoscale,
  parseDuration,
  parseSize,
  timerMs,
} from '../../../dist/util/units.js';

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['30s', 30_000],
    ['2m', 120_000],
    ['1.5h', 5_400_000],
    ['1d', 86_400_000],
    ['10S', 10_000],
    [' 5 s ', 5_000],
    ['42', 42],
    ['0', 0],
    [100, 100],
    [0, 0],
  ] as const)('%j is %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each(['', 'abc', '-5s', '5 sec', '5y', '1,5s', 's', -1, Number.NaN, Number.POSITIVE_INFINITY])(
    '%j is invalid',
    (input) => {
      expect(parseDuration(input)).toBeUndefined();
    },
  );
});

describe('parseSize', () => {
  it.each([
    ['512MB', 512_000_000],
    ['200MiB', 200 * 1024 ** 2],
    ['1G', 1000 ** 3],
    ['1Gi', 1024 ** 3],
    ['2GB', 2_000_000_000],
    ['300k', 300_000],
    ['300Ki', 300 * 1024],
    ['1kb', 1000],
    ['64b', 64],
    ['1.5KiB', 1536],
    ['4096', 4096],
    [1024, 1024],
    [1.9, 1],
  ] as const)('%j is %d bytes', (input, bytes) => {
    expect(parseSize(input)).toBe(bytes);
  });

  it.each([
    ['k', 1],
    ['m', 2],
    ['g', 3],
  ] as const)(
    'one rule for %s: with an i it is a power of 1024, without one a power of 1000, whatever the case',
    (letter, power) => {
      const upper = letter.toUpperCase();
      for (const unit of [letter, upper, `${letter}b`, `${upper}B`])
        expect(parseSize(`2${unit}`)).toBe(2 * 1000 ** power);
      for (const unit of [`${letter}i`, `${upper}i`, `${letter}ib`, `${upper}iB`])
        expect(parseSize(`2${unit}`)).toBe(2 * 1024 ** power);
    },
  );

  it.each(['', '0', '0.4b', 'abc', '5 parsecs', '-1MB', '1 TB', 0, -1, Number.NaN, Number.POSITIVE_INFINITY])(
    '%j is invalid',
    (input) => {
      expect(parseSize(input)).toBeUndefined();
    },
  );
});

describe('parseAutoscale', () => {
  it.each([
    ['4,1', [4, 1]],
    [' 8 , 0 ', [8, 0]],
    ['3,3', [3, 3]],
    [
      [4, 2],
      [4, 2],
    ],
    [
      [1, 0],
      [1, 0],
    ],
  ] as const)('%j is [max, min] %j', (input, pair) => {
    expect(parseAutoscale(input)).toEqual(pair);
  });

  it.each([
    '4',
    '4,1,0',
    '1,2',
    '0,0',
    '4,-1',
    '4.5,1',
    'a,b',
    ',',
    [4],
    [4, 1, 0],
    [2.5, 1],
    [4, -1],
    [0, 0],
    [1, 2],
    ['4', '1'],
    4,
    null,
    undefined,
    { max: 4, min: 1 },
    // Past MAX_PROCESSES (4096), or past 2^53-1 where the number is no longer the one typed.
    '4097,1',
    '99999999999999999999,1',
    [4097, 0],
    [1e20, 1],
  ])('%j is invalid', (input) => {
    expect(parseAutoscale(input)).toBeUndefined();
  });

  it('takes MAX_PROCESSES as a max', () => {
    expect(parseAutoscale(`${MAX_PROCESSES},0`)).toEqual([MAX_PROCESSES, 0]);
  });
});

describe('checkInteger', () => {
  const bad = (option: string, value: unknown, expected: string): never => {
    throw new Error(`${option} ${String(value)}: expected ${expected}`);
  };

  it('takes an integer in its range', () => {
    expect(checkInteger('n', 0, bad, 0)).toBe(0);
    expect(checkInteger('n', Number.MAX_SAFE_INTEGER, bad, 0)).toBe(Number.MAX_SAFE_INTEGER);
    expect(checkInteger('n', 10, bad, 1, 10)).toBe(10);
  });

  it.each([
    [2 ** 53, 'an integer from 0 to 2^53-1'],
    [1e20, 'an integer from 0 to 2^53-1'],
    [-1, 'an integer from 0 to 2^53-1'],
    [1.5, 'an integer from 0 to 2^53-1'],
    ['3', 'an integer from 0 to 2^53-1'],
  ])('refuses %j, naming the range', (value, expected) => {
    expect(() => checkInteger('n', value, bad, 0)).toThrow(`expected ${expected}`);
  });

  it('names a tighter max', () => {
    expect(() => checkInteger('n', 11, bad, 1, 10)).toThrow('expected an integer from 1 to 10');
  });
});

describe('timerMs', () => {
  it('keeps a wait a timer can honour, and cuts a longer one to the longest timer (never negative)', () => {
    expect(timerMs(1_500)).toBe(1_500);
    expect(timerMs(MAX_TIMER_MS)).toBe(2 ** 31 - 1);
    expect(timerMs(100 * 86_400_000)).toBe(2 ** 31 - 1);
    expect(timerMs(Infinity)).toBe(2 ** 31 - 1);
    expect(timerMs(-5)).toBe(0);
  });
});
