import type { Logger } from 'pino';
import { DEFAULT_COMMAND_TIMEOUT_MS } from '../broker/broker-options.js';
import { createBroker } from '../broker/index.js';
import type { Broker } from '../broker/types.js';
import type { Client } from '../client.js';
import { createStderrLogger, envLogLevel } from '../logger.js';
import { brokerUrlOf, namespaceOf, type BrokerFlags } from './broker-flags.js';
import { UsageError } from './usage-error.js';

/**
 * One-shot commands log only errors (a failure is reported by the command's
 * own one-line message), and to stderr, so their stdout stays parseable.
 * $PREFORK_LOG_LEVEL shows more.
 */
function quietLogger(): Logger {
  return createStderrLogger(envLogLevel('error'));
}

/**
 * The broker URL a one-shot command uses. memory:// is refused: that broker
 * lives inside one process, so a one-shot command would get an empty one of
 * its own and whatever it gave it (a job) would be gone when it exits.
 */
function oneShotUrl(target: BrokerFlags): string {
  const chosen = brokerUrlOf(target);
  if (!chosen.startsWith('memory://')) return chosen;
  const source =
    target.broker !== undefined
      ? `option '-b, --broker <url>' argument '${target.broker}'`
      : `$PREFORK_BROKER_URL '${chosen}'`;
  throw new UsageError(
    `${source} is invalid here: a memory:// broker lives inside one process, so this command would talk to an empty one of its own and lose what it gives it; use the redis:// URL your workers use (memory:// is for 'prefork demo' and for a Worker and Client in one program)`,
  );
}

/**
 * A one-shot command's broker, at the URL and in the namespace its flags
 * (or the environment) name. Its commands are bounded (the Client's default
 * commandTimeout): on a Redis that stops answering once connected the
 * command fails with one line and exit 1, instead of hanging; the connect
 * has its own bound. Blocking waits (--wait, control replies, events
 * --follow) are not cut by it: they have their own timeouts.
 */
function oneShotBroker(target: BrokerFlags, logger: Logger): Broker {
  const namespace = namespaceOf(target);
  return createBroker(oneShotUrl(target), {
    logger,
    commandTimeout: DEFAULT_COMMAND_TIMEOUT_MS,
    ...(namespace === undefined ? {} : { namespace }),
  });
}

export async function withBroker<T>(target: BrokerFlags, fn: (broker: Broker) => Promise<T>): Promise<T> {
  const broker = oneShotBroker(target, quietLogger());
  await broker.connect();
  try {
    return await fn(broker);
  } finally {
    await broker.close();
  }
}

/** A Client on a broker the command opens; `fn` gets the whole broker too (a Client uses only its producer and results roles). */
export async function withClient<T>(
  target: BrokerFlags,
  fn: (client: Client, broker: Broker) => Promise<T>,
): Promise<T> {
  const logger = quietLogger();
  const broker = oneShotBroker(target, logger);
  // Loaded here: \`prefork worker\` never needs the Client.
  const { Client } = await import('../client.js');
  const client = new Client({ broker, logger });
  try {
    return await fn(client, broker);
  } finally {
    await Promise.all([client.close(), broker.close()]);
  }
}
