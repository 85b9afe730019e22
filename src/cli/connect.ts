import { createBroker } from '../broker/index.js';
import type { Broker } from '../broker/types.js';
import { Client } from '../client.js';
import { createLogger } from '../logger.js';
import { defaultBrokerUrl } from '../worker-options.js';

/** Commands log only warnings (to stderr) so their stdout stays parseable. */
function quietLogger() {
  return createLogger({ level: process.env.PREFORK_LOG_LEVEL ?? 'warn' });
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

export async function withClient<T>(url: string | undefined, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ broker: url ?? defaultBrokerUrl(), logger: quietLogger() });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
