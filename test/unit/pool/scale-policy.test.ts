import { describe, expect, it } from 'vitest';
import { decideScale, type ScaleDecision, type ScaleInput } from '../../../dist/pool/scale-policy.js';

const KEEPALIVE = 30_000;
const RECENT = { now: 10_000, lastScaleUp: 9_000, keepalive: KEEPALIVE }; // keepalive not yet passed
const PASSED = { now: 100_000, lastScaleUp: 60_000, keepalive: KEEPALIVE }; // keepalive passed
const BOUNDARY = { now: 40_000, lastScaleUp: 10_000, keepalive: KEEPALIVE }; // exactly keepalive since the last scale-up

type Row = [string, Omit<ScaleInput, 'now' | 'lastScaleUp' | 'keepalive'>, typeof RECENT, ScaleDecision];

const table: Row[] = [
  [
    'grows to reserved at once when reserved < max',
    { reserved: 3, current: 1, max: 4, min: 1 },
    RECENT,
    { action: 'grow', to: 3 },
  ],
  [
    'grows to max at once when reserved > max',
    { reserved: 50, current: 1, max: 4, min: 1 },
    RECENT,
    { action: 'grow', to: 4 },
  ],
  ['grows from zero children', { reserved: 2, current: 0, max: 4, min: 0 }, RECENT, { action: 'grow', to: 2 }],
  [
    'grows even right after a scale-up (no keepalive on growth)',
    { reserved: 4, current: 2, max: 4, min: 1 },
    { now: 1, lastScaleUp: 1, keepalive: KEEPALIVE },
    { action: 'grow', to: 4 },
  ],
  [
    'grows up to min when below it, whatever the load',
    { reserved: 0, current: 0, max: 4, min: 2 },
    RECENT,
    { action: 'grow', to: 2 },
  ],
  [
    'grows to min(reserved, max) at once even when below min',
    { reserved: 3, current: 0, max: 4, min: 1 },
    RECENT,
    { action: 'grow', to: 3 },
  ],
  ['stays when reserved equals the size', { reserved: 3, current: 3, max: 4, min: 1 }, PASSED, { action: 'none' }],
  ['stays at max under a load above max', { reserved: 99, current: 4, max: 4, min: 1 }, PASSED, { action: 'none' }],
  [
    'does not shrink before keepalive has passed',
    { reserved: 0, current: 4, max: 4, min: 1 },
    RECENT,
    { action: 'none' },
  ],
  [
    'shrinks to min after keepalive when idle',
    { reserved: 0, current: 4, max: 4, min: 1 },
    PASSED,
    { action: 'shrink', to: 1 },
  ],
  [
    'shrinks to reserved after keepalive when reserved > min',
    { reserved: 2, current: 4, max: 4, min: 1 },
    PASSED,
    { action: 'shrink', to: 2 },
  ],
  ['shrinks no lower than min', { reserved: 1, current: 4, max: 4, min: 3 }, PASSED, { action: 'shrink', to: 3 }],
  [
    'shrinks exactly when keepalive has passed',
    { reserved: 0, current: 2, max: 4, min: 1 },
    BOUNDARY,
    { action: 'shrink', to: 1 },
  ],
  ['shrinks to zero when min is 0', { reserved: 0, current: 1, max: 4, min: 0 }, PASSED, { action: 'shrink', to: 0 }],
  ['stays at min when idle', { reserved: 0, current: 1, max: 4, min: 1 }, PASSED, { action: 'none' }],
  ['stays when max equals min', { reserved: 10, current: 2, max: 2, min: 2 }, PASSED, { action: 'none' }],
  [
    'comes down to max at once when above it (bounds lowered)',
    { reserved: 10, current: 6, max: 4, min: 1 },
    RECENT,
    { action: 'shrink', to: 4 },
  ],
];

describe('decideScale', () => {
  it.each(table)('%s', (_label, input, time, expected) => {
    expect(decideScale({ ...input, ...time })).toEqual(expected);
  });

  it('never decides a size above max or below min, and never shrinks within keepalive unless above max', () => {
    for (let max = 1; max <= 5; max++) {
      for (let min = 0; min <= max; min++) {
        for (let current = 0; current <= 7; current++) {
          for (let reserved = 0; reserved <= 8; reserved++) {
            for (const time of [RECENT, PASSED]) {
              const input = { reserved, current, max, min, ...time };
              const d = decideScale(input);
              const label = JSON.stringify(input);
              if (d.action === 'none') {
                if (current >= min && current <= max) {
                  expect(Math.min(reserved, max) <= current, label).toBe(true);
                } else {
                  throw new Error(`no action outside [min, max]: ${label}`);
                }
                continue;
              }
              expect(d.to, label).toBeGreaterThanOrEqual(min);
              expect(d.to, label).toBeLessThanOrEqual(max);
              if (d.action === 'grow') {
                expect(d.to, label).toBeGreaterThan(current);
                expect(d.to, label).toBe(Math.max(min, Math.min(reserved, max)));
              } else {
                expect(d.to, label).toBeLessThan(current);
                if (current <= max) {
                  expect(time, label).toBe(PASSED);
                  expect(d.to, label).toBe(Math.max(reserved, min));
                }
              }
            }
          }
        }
      }
    }
  });
});
