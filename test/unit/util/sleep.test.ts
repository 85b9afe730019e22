import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { abortableSleep } from '../../../dist/util/sleep.js';

describe('abortableSleep', () => {
  it('leaves no abort listener behind when the timer fires (one signal, many retry waits)', async () => {
    const controller = new AbortController();
    for (let i = 0; i < 20; i++) await abortableSleep(1, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('ends early when the signal aborts, and at once when it already has', async () => {
    const controller = new AbortController();
    const order: string[] = [];
    const long = abortableSleep(60_000, controller.signal).then(() => order.push('slept'));
    controller.abort();
    await long;
    await abortableSleep(60_000, controller.signal);
    expect(order).toEqual(['slept']);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
