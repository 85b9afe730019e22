import { checkKnownKeys, checkResultTtl, throwOptionError } from '../job-option-checks.js';
import { checkDuration, checkInteger, type Bad } from '../util/units.js';
import type { BrokerOptions } from './types.js';

/**
 * The kinds of the Redis broker's keys that sit outside the hash tag,
 * `<namespace>:<kind>:<name>` (Keys.result, reply, controlWake, controlReply).
 */
export const UNTAGGED_KEY_KINDS: readonly string[] = ['res', 'reply', 'ctl-wake', 'ctl-reply'];

/**
 * A namespace: a non-empty string without braces or white space (the Redis
 * broker puts it in a hash tag, `{<namespace>}`). Checked for its type too:
 * a number or an array would have been turned into a string and used.
 *
 * No `:`-separated part after the first may be one of UNTAGGED_KEY_KINDS:
 * namespace "app:res" would otherwise share keys with namespace "app" (the
 * result of its job "x" is `app:res:res:x`, the result of app's job "res:x").
 * A namespace then never spells another's key: where two differ first, one
 * has a kind and the other a part of its namespace, or their parts differ.
 */
export function checkNamespace(option: string, value: unknown, bad: Bad): string {
  if (typeof value !== 'string' || value === '' || /[{}\s]/.test(value))
    bad(option, value, 'a non-empty string without braces or spaces');
  const kind = value
    .split(':')
    .slice(1)
    .find((part) => UNTAGGED_KEY_KINDS.includes(part));
  if (kind !== undefined)
    bad(
      option,
      value,
      `a namespace with no ":${kind}" part (${UNTAGGED_KEY_KINDS.map((k) => `"${k}"`).join(', ')} after a ":" would share result, reply or control keys with the namespace before it)`,
    );
  return value;
}

/**
 * The shortest lease: heartbeats renew it every half of it, so a lease of
 * 1 s is renewed every 500 ms, twice the heartbeat's shortest interval
 * (250 ms). Below that a beat that comes a little late (a GC pause, a slow
 * round trip) loses it, and the node is fenced over and over: with 1 ms, no
 * job ever finished. The default is 20 s.
 */
export const MIN_LEASE_MS = 1_000;

/** A lease in whole ms: at least MIN_LEASE_MS, and short enough for the heartbeat's timer (2^31-1 ms). */
export function checkLease(option: string, value: unknown, bad: Bad): number {
  const ms = Math.round(checkDuration(option, value, 'timer', bad));
  if (ms < MIN_LEASE_MS)
    bad(
      option,
      value,
      `at least ${MIN_LEASE_MS} ms ("1s"): heartbeats renew it every half of it, and a shorter lease is lost to any late beat`,
    );
  return ms;
}

/**
 * The bound a producer's broker gets unless told otherwise: the Client's
 * `commandTimeout` and every one-shot CLI command's. 10 s, as long as a
 * connect may take: a healthy Redis answers in milliseconds, and the bound
 * counts from its last reply, so a long batch is not cut; past it, Redis is
 * frozen or out of reach, not slow. A broker has no bound unless given one
 * (a Worker's must not: see BrokerOptions.commandTimeout).
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 10_000;

/** A `commandTimeout` in ms, or undefined for `false` (no bound); a bad one goes to `bad`. */
export function checkCommandTimeout(option: string, value: unknown, bad: Bad): number | undefined {
  if (value === false) return undefined;
  return checkDuration(option, value, 'timer', (name, given, expected) =>
    bad(name, given, `${expected}, or false for no bound`),
  );
}

export const BROKER_DEFAULTS = {
  namespace: 'prefork',
  resultTtl: 86_400_000,
  leaseMs: 20_000,
  deadMax: 10_000,
  revokeTtl: 86_400_000,
  revokeMax: 100_000,
  eventsMaxLen: 1_000,
};

/** The settings both brokers share, defaults applied; a bad one is an OptionError naming it. */
export interface ResolvedBrokerOptions {
  namespace: string;
  /** Whole ms: Redis takes integer expiries. */
  resultTtl: number;
  leaseMs: number;
  deadMax: number;
  /** Whole ms a revoked id is remembered. */
  revokeTtl: number;
  /** Most revoked ids remembered. */
  revokeMax: number;
  eventsMaxLen: number;
  /** Whole ms; undefined: commands wait for their reply for ever. */
  commandTimeoutMs: number | undefined;
}

const KNOWN = new Set([
  'namespace',
  'resultTtl',
  'leaseMs',
  'deadMax',
  'revokeTtl',
  'revokeMax',
  'eventsMaxLen',
  'commandTimeout',
  'logger',
]);

export function resolveBrokerOptions(options: BrokerOptions): ResolvedBrokerOptions {
  if (typeof options !== 'object' || options === null) throwOptionError('broker options', options, 'an object');
  checkKnownKeys(options, KNOWN, 'broker option', throwOptionError);
  const { resultTtl, leaseMs, deadMax, revokeTtl, revokeMax } = options;
  return {
    namespace:
      options.namespace === undefined
        ? BROKER_DEFAULTS.namespace
        : checkNamespace('namespace', options.namespace, throwOptionError),
    resultTtl:
      resultTtl === undefined ? BROKER_DEFAULTS.resultTtl : checkResultTtl('resultTtl', resultTtl, throwOptionError),
    // Heartbeats renew the lease on a timer of a fraction of it.
    leaseMs: leaseMs === undefined ? BROKER_DEFAULTS.leaseMs : checkLease('leaseMs', leaseMs, throwOptionError),
    deadMax: deadMax === undefined ? BROKER_DEFAULTS.deadMax : checkCount('deadMax', deadMax),
    revokeTtl:
      revokeTtl === undefined
        ? BROKER_DEFAULTS.revokeTtl
        : Math.round(checkDuration('revokeTtl', revokeTtl, 'expiry', throwOptionError)),
    revokeMax: revokeMax === undefined ? BROKER_DEFAULTS.revokeMax : checkCount('revokeMax', revokeMax, 1),
    eventsMaxLen:
      options.eventsMaxLen === undefined
        ? BROKER_DEFAULTS.eventsMaxLen
        : checkCount('eventsMaxLen', options.eventsMaxLen, 1),
    commandTimeoutMs:
      options.commandTimeout === undefined
        ? undefined
        : checkCommandTimeout('commandTimeout', options.commandTimeout, throwOptionError),
  };
}

/** A count, not rounded into one: NaN would fail every Redis fetch script, or leave the memory dead set unbounded. */
function checkCount(option: string, value: unknown, min = 0): number {
  return checkInteger(option, value, throwOptionError, min);
}
