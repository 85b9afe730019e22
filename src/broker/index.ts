import { OptionError } from '../errors.js';
import { EXPECTED_BROKER_URL } from './broker-url.js';
import { maskUrl } from './mask-url.js';
import { MemoryBroker } from './memory/memory-broker.js';
import { RedisBroker } from './redis/redis-broker.js';
import type { Broker, BrokerOptions } from './types.js';

// The broker SPI, 'prefork/broker': createBroker, the Broker roles
// (types.ts) and the records they carry, and the errors a broker throws.
export type * from './types.js';
export type { BackoffOptions, JobOptions, SerializedError } from '../job-types.js';
export type { NodeEvent, NodeEventType } from '../events/node-event.js';
export type { EventBatch, JobStep } from '../events/event-batch.js';
export { BrokerOfflineError, BrokerRefusedError, BrokerTimeoutError, BrokerUnavailableError } from '../errors.js';

/**
 * A broker for a URL: `redis://` / `rediss://` (distributed) or
 * `memory://[name]` (embedded, one process). Nothing connects before
 * `connect()`. Throws OptionError for any other URL or a bad option.
 */
export function createBroker(url: string, options: BrokerOptions = {}): Broker {
  if (typeof url === 'string') {
    if (url.startsWith('memory://')) return MemoryBroker.open(url, options);
    if (url.startsWith('redis://') || url.startsWith('rediss://')) return new RedisBroker(url, options);
  }
  throw new OptionError('broker', typeof url === 'string' ? maskUrl(url) : url, EXPECTED_BROKER_URL);
}
