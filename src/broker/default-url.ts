/** The broker a Worker, a Client or the CLI uses when given none: a local Redis. */
export const DEFAULT_BROKER_URL = 'redis://127.0.0.1:6379';

/** The broker URL used when none is given: `$PREFORK_BROKER_URL`, else a local Redis. */
export function defaultBrokerUrl(): string {
  return process.env.PREFORK_BROKER_URL || DEFAULT_BROKER_URL;
}
