import { expect, vi } from 'vitest';

/**
 * Options for vi.waitFor: as expect.poll's defaults in vitest.config.ts, the
 * timeout only bounds a hang (generous, under the test timeout) and asserts
 * nothing about speed.
 */
export const WAIT = { timeout: 20_000, interval: 20 } as const;

/** Waits through vi.waitFor until `condition` (sync or async) holds; fails naming `what`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs: number = WAIT.timeout,
): Promise<void> {
  await vi.waitFor(async () => expect(await condition(), what).toBe(true), { ...WAIT, timeout: timeoutMs });
}
