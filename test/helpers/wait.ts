/**
 * Options for vi.waitFor: as expect.poll's defaults in vitest.config.ts, the
 * timeout only bounds a hang (generous, under the test timeout) and asserts
 * nothing about speed.
 */
export const WAIT = { timeout: 20_000, interval: 20 } as const;
