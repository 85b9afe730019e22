/**
 * A redis:// URL is checked whole at createBroker, before anything connects:
 * ioredis reads the database with parseInt, so "/abc" became `SELECT NaN` (an
 * uncaught error) and "/2x" or "/2/3" silently database 2. Whether Redis has
 * the database is Redis's to say, when the connection opens.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createBroker } from '../../../dist/broker/index.js';
import { OptionError } from '../../../dist/errors.js';
import { maskUrl } from '../../../dist/broker/mask-url.js';

const silent = pino({ level: 'silent' });

/** createBroker(url) throws an OptionError naming the broker, showing `shown` (no password) and saying `expected`. */
function expectRefused(url: string, shown: string, expected: string): void {
  let err: unknown;
  try {
    createBroker(url, { logger: silent });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(OptionError);
  expect((err as OptionError).option).toBe('broker');
  expect((err as OptionError).value).toBe(shown);
  expect((err as OptionError).message).toContain(expected);
  expect((err as OptionError).message).not.toContain('s3cret');
  expect((err as OptionError).message).not.toContain('cret');
}

describe('the database in a redis:// URL', () => {
  it.each([
    ['redis://127.0.0.1:6379/abc', 'redis://127.0.0.1:6379/abc'],
    ['redis://127.0.0.1:6379/2x', 'redis://127.0.0.1:6379/2x'],
    ['redis://127.0.0.1:6379/2/3', 'redis://127.0.0.1:6379/2/3'],
    ['redis://127.0.0.1:6379/-1', 'redis://127.0.0.1:6379/-1'],
    ['redis://127.0.0.1:6379/1.5', 'redis://127.0.0.1:6379/1.5'],
    ['rediss://127.0.0.1:6379?db=abc', 'rediss://127.0.0.1:6379?db=abc'],
    ['redis://user:s3cret@127.0.0.1:6379/abc', 'redis://user:***@127.0.0.1:6379/abc'],
  ])('%s is refused, naming the URL (password masked) and what a database is', (url, shown) => {
    expectRefused(url, shown, 'the db a whole number >= 0');
  });

  it('a db in the path and as ?db= is refused: ioredis would take the path and drop the other', () => {
    expectRefused('redis://127.0.0.1:6379/1?db=2', 'redis://127.0.0.1:6379/1?db=2', 'given once (the path or ?db=)');
    expectRefused('redis://127.0.0.1:6379/1?db=1', 'redis://127.0.0.1:6379/1?db=1', 'given once (the path or ?db=)');
  });

  it.each([
    ['redis://127.0.0.1:6379?retryStrategy=1', 'redis://127.0.0.1:6379?retryStrategy=1'],
    ['redis://127.0.0.1:6379/0?commandTimeout=5', 'redis://127.0.0.1:6379/0?commandTimeout=5'],
    ['redis://127.0.0.1:6379?keyPrefix=x:', 'redis://127.0.0.1:6379?keyPrefix=x:'],
    ['redis://127.0.0.1:6379?password=s3cret', 'redis://127.0.0.1:6379?password=***'],
    ['redis://127.0.0.1:6379?db=1&db=abc', 'redis://127.0.0.1:6379?db=1&db=abc'],
    ['redis://127.0.0.1:6379?family=5', 'redis://127.0.0.1:6379?family=5'],
    ['redis://127.0.0.1:6379?__proto__=1', 'redis://127.0.0.1:6379?__proto__=1'],
  ])('%s is refused: ioredis would make any other parameter a connection option, over prefork’s', (url, shown) => {
    expectRefused(url, shown, 'with no URL parameter but db');
  });

  it.each([
    'redis://127.0.0.1:6379',
    'redis://127.0.0.1:6379/',
    'redis://127.0.0.1:6379/0',
    'redis://127.0.0.1:6379/15',
    'redis://127.0.0.1:6379/1000',
    'rediss://127.0.0.1:6379?db=3',
    'redis://localhost:6379/0?family=6',
    'redis://127.0.0.1:6379?db=2&family=4',
  ])('%s is accepted', async (url) => {
    await createBroker(url, { logger: silent }).close();
  });
});

describe('a refused broker URL never shows its password', () => {
  it.each([
    // Not a scheme createBroker takes (it compares case-sensitively): shown as typed.
    ['REDIS://:s3cret@127.0.0.1:6379', 'REDIS://:***@127.0.0.1:6379'],
    ['http://user:s3cret@127.0.0.1:6379', 'http://user:***@127.0.0.1:6379'],
    ['redis+sentinel://:s3cret@127.0.0.1:26379', 'redis+sentinel://:***@127.0.0.1:26379'],
  ])('%s, of another scheme, is shown as %s', (url, shown) => {
    expectRefused(url, shown, 'a redis://, rediss:// or memory:// URL');
  });

  it.each([
    // A base64 password, not percent-encoded: "/" ends the host part, so the URL does not parse.
    ['redis://:s3/cret+x==@127.0.0.1:6379', 'redis://:***@127.0.0.1:6379'],
    ['redis://user:s3cret/@127.0.0.1:6379/0', 'redis://user:***@127.0.0.1:6379/0'],
  ])('%s, that does not parse, is shown as %s', (url, shown) => {
    expectRefused(url, shown, 'redis://[user:password@]host:port');
  });
});

describe('a broker URL as messages show it', () => {
  it.each([
    ['redis://', 'redis://'],
    ['rediss://', 'rediss://'],
    ['redis://127.0.0.1:6379/', 'redis://127.0.0.1:6379'],
    ['redis://:s3cret@127.0.0.1:6379/2', 'redis://:***@127.0.0.1:6379/2'],
    ['redis://u@h?password=s3cret', 'redis://u@h?password=***'],
  ])('%s is shown as %s', (url, shown) => {
    expect(maskUrl(url)).toBe(shown);
  });
});
