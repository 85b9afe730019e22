import type { Logger } from 'pino';
import { createBroker } from '../broker/index.js';
import type { Broker } from '../broker/types.js';
import { Client } from '../client.js';
import { createStderrLogger } from '../logger.js';
import { defaultBrokerUrl } from '../broker/default-url.js';

/**
 * One-shot commands log only errors (a failure is reported by the command's
 * own one-line message), and to stderr, so their stdout stays parseable.
 * $PREFORK_LOG_LEVEL shows more.
 */
function quietLogger(): Logger {
  return createStderrLogger(process.env.PREFORK_LOG_LEVEL ?? 'error');
}

export async function withBroker<T>(url: string | undefined, fn: (broker: Broker) => Promise<T>): Promise<T> {
  const broker = createBroker(url ?? defaultBrokerUrl(), { logger: quietLogger() });
  await broker.connect();
  try {
    return await fn(broker);
  } finally {
    await broker.close();
  }
}

/** A Client on a broker the command opens; `fn` gets the whole broker too (a Client uses only its producer and results roles). */
export async function withClient<T>(
  url: string | undefined,
  fn: (client: Client, broker: Broker) => Promise<T>,
): Promise<T> {
  const logger = quietLogger();
  const broker = createBroker(url ?? defaultBrokerUrl(), { logger });
  const client = new Client({ broker, logger });
  try {
    return await fn(client, broker);
  } finally {
    await client.close();
    await broker.close();
  }
}
