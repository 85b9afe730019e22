/**
 * The connections' error reporting: an outage is one warning; an error
 * ioredis reports while we close the connection on purpose (a handshake
 * SELECT sent into a socket our disconnect() had ended, seen under load as
 * "Stream isn't writeable and enableOfflineQueue options is false") is not
 * an outage, and says nothing above debug.
 */
import { describe, expect, it } from 'vitest';
import { createConnection } from '../../dist/broker/redis/connection.js';
import { captureLog } from '../helpers/worker.js';
import { redisUrl } from './redis-helpers.js';

const HANDSHAKE_CUT = "Stream isn't writeable and enableOfflineQueue options is false";
const warnings = (lines: Record<string, unknown>[]): unknown[] =>
  lines.filter((l) => (l.level as number) >= 40).map((l) => l.msg);

describe('Redis connections: errors while closing on purpose', () => {
  it('an error after our own disconnect() is logged at debug, not as a lost connection', async () => {
    const { log, lines } = captureLog();
    const redis = createConnection(redisUrl(), 'blocking', 'prefork:test', log);
    await redis.connect();
    redis.disconnect();
    // What ioredis emits when its handshake SELECT meets the socket disconnect() ended.
    redis.emit('error', new Error(HANDSHAKE_CUT));
    expect(warnings(lines)).toEqual([]);
    expect(lines.some((l) => l.msg === 'redis connection error while closing' && l.err === HANDSHAKE_CUT)).toBe(true);
  });

  it('the same error on an open connection is an outage: one warning', async () => {
    const { log, lines } = captureLog();
    const redis = createConnection(redisUrl(), 'blocking', 'prefork:test', log);
    await redis.connect();
    redis.emit('error', new Error(HANDSHAKE_CUT));
    redis.emit('error', new Error(HANDSHAKE_CUT));
    redis.disconnect();
    expect(warnings(lines)).toEqual(['redis connection lost; reconnecting']);
  });
});
