import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { OptionError, Worker } from 'prefork';
import { createBroker } from 'prefork/broker';
import { MIN_LEASE_MS } from '../../dist/broker/broker-options.js';
import { resolveWorkerOptions } from '../../dist/worker-options.js';

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

  // A lease is renewed every half of it: with 1 ms a node could never finish a job (fenced over and over).
  it.each([1, 999, '500ms'])('new Worker refuses leaseMs %j: shorter than 1 s, naming the minimum', (leaseMs) => {
    const err = rejectionOf(() => new Worker({ app: APP, broker: 'memory://lease-option', leaseMs, logger: silent }));
    expect(err.option).toBe('leaseMs');
    expect(err.value).toBe(leaseMs);
    expect(err.message).toContain('at least 1000 ms');
  });

  it.each(['memory://lease-option', 'redis://127.0.0.1:1'])('%s refuses a leaseMs under 1 s', (url) => {
    const err = rejectionOf(() => createBroker(url, { leaseMs: 1, logger: silent }));
    expect(err.option).toBe('leaseMs');
    expect(err.message).toContain('at least 1000 ms');
  });

  it('accepts the shortest lease, 1 s', () => {
    const broker = createBroker('memory://lease-option', { leaseMs: MIN_LEASE_MS, logger: silent });
    expect(broker.leaseMs).toBe(1_000);
    return broker.close();
  });

  it('accepts the longest timer', () => {
    const broker = createBroker('memory://lease-option', { leaseMs: 2 ** 31 - 1, logger: silent });
    expect(broker.leaseMs).toBe(2 ** 31 - 1);
    return broker.close();
  });
});

describe('lease: the Worker option (leaseMs is its old name)', () => {
  it('takes a duration in ms or a string', () => {
    expect(resolveWorkerOptions({ app: APP, lease: '2s' }).leaseMs).toBe(2_000);
    expect(resolveWorkerOptions({ app: APP, lease: 1_500 }).leaseMs).toBe(1_500);
    expect(resolveWorkerOptions({ app: APP }).leaseMs).toBeUndefined();
  });

  it('still takes leaseMs, but not both at once', () => {
    expect(resolveWorkerOptions({ app: APP, leaseMs: '3s' }).leaseMs).toBe(3_000);
    expect(rejectionOf(() => resolveWorkerOptions({ app: APP, lease: '2s', leaseMs: '3s' })).option).toBe('leaseMs');
  });

  it.each(['100d', 0, 'soon', 1, '999ms'])('refuses lease %j, naming lease', (lease) => {
    const err = rejectionOf(() => resolveWorkerOptions({ app: APP, lease }));
    expect(err.option).toBe('lease');
    expect(err.value).toBe(lease);
  });
});
