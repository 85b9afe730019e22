import { describe, expect, it } from 'vitest';
import { isLoopback } from '../../../dist/dashboard/guard.js';

describe('isLoopback: the addresses only this machine reaches (the dashboard checks Host only on them)', () => {
  it.each([
    '127.0.0.1',
    '127.0.0.2',
    '127.255.255.254',
    'localhost',
    'LOCALHOST',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.2',
    '[::ffff:127.0.0.1]',
  ])('%s is', (host) => expect(isLoopback(host)).toBe(true));

  it.each(['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '::ffff:10.0.0.1', 'evil.example', 'localhost.evil.example', ''])(
    '%s is not',
    (host) => expect(isLoopback(host)).toBe(false),
  );
});
