import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { OptionError, Worker } from 'prefork';
import { createBroker } from 'prefork/broker';

const silent = pino({ level: 'silent' });
const APP = '/srv/app/tasks.mjs';

function rejectionOf(make: () => unknown): OptionError {
  try {
    make();
  } catch (err) {
    expect(err).toBeInstanceOf(OptionError);
    return err as OptionError;
  }
  throw new Error('the option was accepted');
}

describe('leaseMs: heartbeats run on a timer of a fraction of it, so it is bounded like a timer', () => {
  // 100 days: a timer past 2^31-1 ms fires at once, so heartbeats would run back to back.
  it.each(['100d', 2 ** 31, 0, 'soon'])('new Worker refuses leaseMs %j, naming the option', (leaseMs) => {
    const err = rejectionOf(() => new Worker({ app: APP, broker: 'memory://lease-option', leaseMs, logger: silent }));
    expect(err.option).toBe('leaseMs');
    expect(err.value).toBe(leaseMs);
  });

  it.each(['memory://lease-option', 'redis://127.0.0.1:1'])('%s refuses a leaseMs over 2^31-1 ms', (url) => {
    const err = rejectionOf(() => createBroker(url, { leaseMs: 100 * 86_400_000, logger: silent }));
    expect(err.option).toBe('leaseMs');
    expect(err.message).toContain('2147483647');
  });

  it('accepts the longest timer', () => {
    const broker = createBroker('memory://lease-option', { leaseMs: 2 ** 31 - 1, logger: silent });
    expect(broker.leaseMs).toBe(2 ** 31 - 1);
    return broker.close();
  });
});
