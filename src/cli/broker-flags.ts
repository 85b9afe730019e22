import { Option } from 'commander';
import { checkNamespace } from '../broker/broker-options.js';
import { DEFAULT_BROKER_URL } from '../broker/default-url.js';
import { checkBrokerUrl } from '../broker/broker-url.js';
import { maskUrl } from '../broker/mask-url.js';
import * as parse from './parsers.js';
import { UsageError } from './usage-error.js';

/** Where a command's broker is: the flags every command that reaches one takes. */
export interface BrokerFlags {
  broker?: string;
  namespace?: string;
}

export function brokerOption(): Option {
  return new Option(
    parse.BROKER_FLAG,
    'broker URL (default $PREFORK_BROKER_URL, else redis://127.0.0.1:6379)',
  ).argParser(parse.brokerUrl);
}

export function namespaceOption(): Option {
  return new Option(
    '--namespace <name>',
    'key namespace: workers and clients see each other\'s jobs only in the same one (default $PREFORK_NAMESPACE, else "prefork")',
  ).argParser(parse.namespace);
}

/**
 * The namespace a command works in: the flag, else $PREFORK_NAMESPACE (an
 * empty one counts as unset), else undefined for the library's default. A
 * bad variable is a usage error naming it, as a bad flag names the flag.
 */
export function namespaceOf(flags: BrokerFlags): string | undefined {
  if (flags.namespace !== undefined) return flags.namespace;
  const env = process.env.PREFORK_NAMESPACE;
  if (env === undefined || env === '') return undefined;
  return checkNamespace('', env, (_option, _value, expected) => {
    throw new UsageError(`$PREFORK_NAMESPACE '${env}' is invalid. expected ${expected}`);
  });
}

/**
 * The broker URL a command uses: the flag, else $PREFORK_BROKER_URL (an
 * empty one counts as unset), else a local Redis. A bad variable is a usage
 * error naming it (its password masked): nobody typed a --broker to look at.
 */
export function brokerUrlOf(flags: BrokerFlags): string {
  if (flags.broker !== undefined) return flags.broker;
  const env = process.env.PREFORK_BROKER_URL;
  if (env === undefined || env === '') return DEFAULT_BROKER_URL;
  const bad = (_option: string, _value: unknown, expected: string): never => {
    throw new UsageError(`$PREFORK_BROKER_URL '${maskUrl(env)}' is invalid. expected ${expected}`);
  };
  checkBrokerUrl(env, bad);
  return env;
}
