import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { OptionError, Worker } from 'prefork';

const silent = pino({ level: 'silent' });
const APP = '/srv/app/tasks.mjs';

function rejectionOf(options: Record<string, unknown>): OptionError {
  try {
    new Worker({ app: APP, broker: 'memory://max-concurrency', logger: silent, ...options });
  } catch (err) {
    expect(err).toBeInstanceOf(OptionError);
    return err as OptionError;
  }
  throw new Error(`new Worker accepted ${JSON.stringify(options)}`);
}

describe("maxConcurrency: the Worker's bound on growth (the Pool's maxProcesses)", () => {
  it('reaches the pool', () => {
    const worker = new Worker({
      app: APP,
      broker: 'memory://max-concurrency',
      concurrency: 2,
      maxConcurrency: 5,
      logger: silent,
    });
    expect(worker.pool.options).toMatchObject({ processes: 2, maxProcesses: 5 });
  });

  it.each([0, 2.5, '4'])('refuses %j, naming the option', (maxConcurrency) => {
    const err = rejectionOf({ maxConcurrency });
    expect(err.option).toBe('maxConcurrency');
    expect(err.value).toBe(maxConcurrency);
  });

  it('refuses a concurrency or an autoscale max above it, naming that option', () => {
    expect(rejectionOf({ concurrency: 5, maxConcurrency: 4 })).toMatchObject({ option: 'concurrency', value: 5 });
    const err = rejectionOf({ autoscale: '6,1', maxConcurrency: 4 });
    expect(err).toMatchObject({ option: 'autoscale', value: '6,1' });
    expect(err.message).toContain('maxConcurrency (4)');
  });
});
