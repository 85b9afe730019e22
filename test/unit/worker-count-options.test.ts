/**
 * The Worker's counts reach the pool's sizes and the broker's scripts as
 * arguments (the fetch's count, the recovery's redelivery limit): a count
 * past its bound is refused at construction, naming the option, instead of
 * a node that starts, says it is ready, and never fetches or recovers.
 * Queue specs likewise: a weight is bounded, and a spec that is not one is
 * named, not passed through.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { OptionError, Worker } from 'prefork';

const silent = pino({ level: 'silent' });
const APP = '/srv/app/tasks.mjs';

function rejectionOf(options: Record<string, unknown>): OptionError {
  try {
    new Worker({ app: APP, broker: 'memory://worker-counts', logger: silent, ...options });
  } catch (err) {
    expect(err).toBeInstanceOf(OptionError);
    return err as OptionError;
  }
  throw new Error(`new Worker accepted ${JSON.stringify(options)}`);
}

describe('Worker counts past their bounds', () => {
  it.each([
    ['concurrency', 1e20, 'an integer from 1 to 4096'],
    ['concurrency', 4097, 'an integer from 1 to 4096'],
    ['maxConcurrency', 4097, 'an integer from 1 to 4096'],
    ['prefetchMultiplier', 1e20, 'an integer from 1 to 1024'],
    ['prefetchMultiplier', 1025, 'an integer from 1 to 1024'],
    ['maxRedeliveries', 1e20, 'an integer from 0 to 2^53-1'],
    ['maxRedeliveries', 2 ** 53, 'an integer from 0 to 2^53-1'],
  ])('refuses %s = %j, naming it and the range', (option, value, expected) => {
    const err = rejectionOf({ [option]: value });
    expect(err.option).toBe(option);
    expect(err.value).toBe(value);
    expect(err.message).toContain(`(expected ${expected})`);
  });

  it.each([['99999999999999999999,1'], [[1e20, 1]], ['4097,0']])('refuses autoscale %j', (autoscale) => {
    const err = rejectionOf({ autoscale });
    expect(err.option).toBe('autoscale');
    expect(err.message).toContain('1 <= max <= 4096');
  });

  it.each([[[{ name: 'a', weight: 200_000_000 }]], [[{ name: 'a', weight: 'x' }]], [[null]], [[{ name: 'a' }]]])(
    'refuses queues %j, naming the queue spec',
    (queues) => {
      const err = rejectionOf({ queues });
      expect(err.option).toBe('queues');
      expect(err.value).toBe(queues[0]);
    },
  );

  it('takes the bounds themselves', () => {
    const worker = new Worker({
      app: APP,
      broker: 'memory://worker-counts',
      concurrency: 1,
      prefetchMultiplier: 1024,
      maxRedeliveries: Number.MAX_SAFE_INTEGER,
      logger: silent,
    });
    expect(worker.options).toMatchObject({ prefetchMultiplier: 1024, maxRedeliveries: Number.MAX_SAFE_INTEGER });
  });
});
