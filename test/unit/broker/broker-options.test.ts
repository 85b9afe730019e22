/**
 * The settings both brokers share are checked once, in resolveBrokerOptions:
 * a bad one is an OptionError naming it, from either broker, at createBroker;
 * so is an option neither broker knows.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Client, Worker } from 'prefork';
import { createBroker } from '../../../dist/broker/index.js';
import { OptionError } from '../../../dist/errors.js';

const silent = pino({ level: 'silent' });

function rejectionOf(make: () => unknown): OptionError {
  try {
    make();
  } catch (err) {
    expect(err).toBeInstanceOf(OptionError);
    return err as OptionError;
  }
  throw new Error('the option was accepted');
}

describe('deadMax: how many dead jobs a queue keeps', () => {
  // NaN made every Redis fetch script fail (intArg) and left the memory dead set unbounded.
  it.each([
    ['memory://broker-options', Number.NaN],
    ['memory://broker-options', 'many'],
    ['memory://broker-options', -1],
    ['memory://broker-options', 2.5],
    ['redis://127.0.0.1:1', Number.NaN],
  ])('%s refuses deadMax %s, naming the option', (url, deadMax) => {
    const err = rejectionOf(() => createBroker(url, { deadMax: deadMax as number, logger: silent }));
    expect(err.option).toBe('deadMax');
    expect(err.message).toContain('an integer from 0 to 2^53-1');
  });

  it('accepts 0 (keep no dead job) and a positive integer', async () => {
    for (const deadMax of [0, 5]) {
      const broker = createBroker('memory://broker-options', { deadMax, logger: silent });
      await broker.close();
    }
  });
});

describe('namespace', () => {
  // A number or an array became a string ("42", "arr") and was used as the key prefix.
  const bad: unknown[] = [42, ['arr'], { toString: () => 'obj' }, null, '', 'a b', '{x}'];
  it.each(['memory://broker-options', 'redis://127.0.0.1:1'])('%s refuses one that is not a usable string', (url) => {
    for (const namespace of bad) {
      const err = rejectionOf(() => createBroker(url, { namespace: namespace as string, logger: silent }));
      expect(err.option).toBe('namespace');
      expect(err.value).toBe(namespace);
      expect(err.message).toContain('a non-empty string without braces or spaces');
    }
  });

  it.each([
    [
      'Worker',
      (namespace: unknown) => new Worker({ app: '/srv/app/tasks.mjs', namespace: namespace as string, logger: silent }),
    ],
    [
      'Client',
      (namespace: unknown) =>
        new Client({ broker: 'redis://127.0.0.1:1', namespace: namespace as string, logger: silent }),
    ],
  ])('new %s refuses one too', (_what, make) => {
    for (const namespace of bad) expect(rejectionOf(() => make(namespace)).option).toBe('namespace');
  });

  it.each(['memory://broker-options', 'redis://127.0.0.1:1'])(
    '%s refuses one that would share result, reply or control keys with another',
    (url) => {
      // "app:res"'s result of job "x" and "app"'s of job "res:x" are both the key app:res:res:x.
      for (const [namespace, kind] of [
        ['app:res', 'res'],
        ['app:reply:x', 'reply'],
        ['a:b:ctl-reply', 'ctl-reply'],
        ['app:ctl-wake', 'ctl-wake'],
      ]) {
        const err = rejectionOf(() => createBroker(url, { namespace, logger: silent }));
        expect(err.option).toBe('namespace');
        expect(err.message).toContain(`a namespace with no ":${kind}" part`);
      }
    },
  );

  it('takes any other string, ":" included', async () => {
    for (const namespace of ['app', 'app:prod', 'é', '__proto__', 'res', 'reply:app', 'app:results', 'app:']) {
      const broker = createBroker('memory://broker-options', { namespace, logger: silent });
      await broker.close();
    }
  });
});

describe('an option no broker knows', () => {
  it.each(['memory://broker-options', 'redis://127.0.0.1:1'])('%s refuses it, naming it', (url) => {
    const err = rejectionOf(() => createBroker(url, { namepsace: 'x', logger: silent } as never));
    expect(err.option).toBe('namepsace');
    expect(err.message).toContain('a known broker option');
  });
});
