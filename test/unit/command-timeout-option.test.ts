/**
 * commandTimeout: the bound on a producer's calls. The Client sets it (10 s
 * by default, `false` for none) on the broker it opens for a URL; a broker
 * object brings its own (createBroker's option), and a Worker refuses a
 * bounded one: its fetches must never be cut short.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, OptionError, Worker } from 'prefork';
import { createBroker } from 'prefork/broker';

const silent = pino({ level: 'silent' });
const APP = '/srv/app/tasks.mjs';
const URL = 'redis://127.0.0.1:1';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function rejectionOf(make: () => unknown): OptionError {
  try {
    make();
  } catch (err) {
    expect(err).toBeInstanceOf(OptionError);
    return err as OptionError;
  }
  throw new Error('the option was accepted');
}

/** A Client on a URL (nothing connects before a call); its broker, as it bounds its commands. */
function boundOf(options: { commandTimeout?: number | string | false }): number | undefined {
  const client = new Client({ broker: URL, logger: silent, ...options });
  closers.push(() => client.close());
  return client.broker.commandTimeoutMs;
}

describe('Client commandTimeout', () => {
  it('bounds the broker the client opens: 10 s by default, as given (ms or a duration), none with false', () => {
    expect(boundOf({})).toBe(10_000);
    expect(boundOf({ commandTimeout: 300 })).toBe(300);
    expect(boundOf({ commandTimeout: '2s' })).toBe(2_000);
    expect(boundOf({ commandTimeout: false })).toBeUndefined();
  });

  it.each([0, -1, 'soon', true, 2 ** 31])('refuses %j, naming the option and that false turns it off', (value) => {
    const err = rejectionOf(() => new Client({ broker: URL, logger: silent, commandTimeout: value as number }));
    expect(err.option).toBe('commandTimeout');
    expect(err.message).toContain('or false for no bound');
  });

  it('is refused beside a broker object, which brings its own bound', () => {
    const broker = createBroker('memory://command-timeout', { logger: silent });
    closers.push(() => broker.close());
    const err = rejectionOf(() => new Client({ broker, logger: silent, commandTimeout: '1s' }));
    expect(err.option).toBe('commandTimeout');
    expect(err.message).toContain('createBroker(url, { commandTimeout })');
  });

  it("so is a namespace, which the broker object's own would silently override", () => {
    const broker = createBroker('memory://namespace-beside', { namespace: 'one', logger: silent });
    closers.push(() => broker.close());
    const err = rejectionOf(() => new Client({ broker, logger: silent, namespace: 'two' }));
    expect(err.option).toBe('namespace');
    expect(err.message).toBe(
      'invalid option namespace: "two" (expected no namespace with a broker object: give it to createBroker(url, { namespace }))',
    );
  });
});

describe('createBroker commandTimeout', () => {
  it('a redis:// broker keeps it in ms; none by default', () => {
    expect(createBroker(URL, { logger: silent }).commandTimeoutMs).toBeUndefined();
    expect(createBroker(URL, { commandTimeout: '1.5s', logger: silent }).commandTimeoutMs).toBe(1_500);
    expect(createBroker(URL, { commandTimeout: false, logger: silent }).commandTimeoutMs).toBeUndefined();
  });

  it.each(['memory://command-timeout', URL])('%s refuses a bad one, naming it and that false turns it off', (url) => {
    const err = rejectionOf(() => createBroker(url, { commandTimeout: 'later', logger: silent }));
    expect(err.option).toBe('commandTimeout');
    expect(err.message).toContain('or false for no bound');
  });
});

describe('a Worker given a broker object', () => {
  it('refuses one whose commands are bounded, saying why; takes one without, which a Client may share', () => {
    const bounded = createBroker(URL, { commandTimeout: '5s', logger: silent });
    const err = rejectionOf(() => new Worker({ app: APP, broker: bounded, logger: silent }));
    expect(err.option).toBe('broker');
    expect(err.message).toMatch(/a broker without commandTimeout: a Worker's fetches.* must wait for Redis's reply/);
    const broker = createBroker(URL, { logger: silent });
    expect(() => new Worker({ app: APP, broker, logger: silent })).not.toThrow();
    const client = new Client({ broker, logger: silent });
    closers.push(() => client.close());
    expect(client.broker.commandTimeoutMs).toBeUndefined();
  });

  it.each([
    ['namespace', 'two', 'namespace'],
    ['resultTtl', '1h', 'resultTtl'],
    ['lease', '30s', 'leaseMs'],
    ['leaseMs', 30_000, 'leaseMs'],
  ] as const)("refuses a %s beside it, which the object's own would silently override", (option, value, given) => {
    const broker = createBroker(URL, { logger: silent });
    const err = rejectionOf(() => new Worker({ app: APP, broker, logger: silent, [option]: value }));
    expect(err.option).toBe(option);
    expect(err.message).toContain(
      `(expected no ${option} with a broker object: give it to createBroker(url, { ${given} }))`,
    );
  });
});
