import type { Redis } from 'ioredis';
import { BrokerRefusedError, messageOf } from '../../errors.js';

/**
 * Redis replies that say "not now" rather than "never": the server is busy,
 * loading, failing over, out of memory or out of connections, or a blocking
 * read's stream was deleted under it (UNBLOCKED: the next read makes it
 * again). Sending the same command later can succeed, so these are retried
 * like a lost connection. So is a value over proto-max-bulk-len ("invalid
 * bulk length"): the broker checks values against the limit it read, so
 * the limit was lowered since; Redis drops the connection, the broker reads
 * the limit again on the reconnect, and the command sent again is fitted
 * under it (results.ts).
 */
const TRANSIENT_REPLIES =
  /^(LOADING|BUSY|TRYAGAIN|MASTERDOWN|READONLY|CLUSTERDOWN|NOREPLICAS|MISCONF|OOM|NOSCRIPT|MOVED|ASK|UNBLOCKED)\b|^ERR max number of clients reached|^ERR Protocol error: invalid bulk length/;

/** What Redis puts in front of an error raised by a command inside a script ("ERR user_script:12: WRONGTYPE ..."). */
const SCRIPT_ERROR_PREFIX = /^ERR user_script:\d+: /;

/** The tail Redis adds to a script's error ("script: <sha>, on @user_script:12."): the line number says it all. */
const SCRIPT_ERROR_TAIL = /\s*script: [0-9a-f]{40}, on @user_script:\d+\.?$/;

/**
 * True when sending the same request again would fail the same way: the
 * broker understood the request and refused it (a Redis error reply such as
 * WRONGTYPE or a script error), or the client could not even build it (a
 * TypeError / RangeError while encoding). Anything else (the connection is
 * down, a command timed out) is transient.
 */
export function isRefusal(err: unknown): boolean {
  if (err instanceof TypeError || err instanceof RangeError) return true;
  if (!(err instanceof Error) || err.name !== 'ReplyError') return false;
  return !TRANSIENT_REPLIES.test(err.message.replace(SCRIPT_ERROR_PREFIX, ''));
}

/** A Redis error reply on one line, without what Redis wraps a script's error in (its line, its hash). */
export function replyText(err: unknown): string {
  return messageOf(err).replace(SCRIPT_ERROR_PREFIX, '').replace(SCRIPT_ERROR_TAIL, '');
}

/** True for a refusal because a key holds another type than the command needs (someone else wrote it). */
export function isWrongType(err: unknown): boolean {
  return err instanceof Error && /\bWRONGTYPE\b/.test(err.message);
}

/**
 * A settle failure as the Broker contract has it: a BrokerRefusedError when
 * sending the same settlements again would fail the same way (the Acker then
 * splits the batch to find the settlement at fault instead of retrying it
 * for ever), else the error as is (transient: the batch is sent again).
 */
export function settleError(err: unknown): unknown {
  if (!isRefusal(err)) return err;
  const what = err instanceof TypeError || err instanceof RangeError ? 'cannot be encoded' : 'were refused by Redis';
  return new BrokerRefusedError(`the settlements ${what}: ${replyText(err)}`, { cause: err });
}

/**
 * A failed call of the node's loops (`what`: "the fetch", "the heartbeat")
 * as the Broker contract has it: a BrokerRefusedError naming the reply (and
 * `detail`, e.g. the keys of the wrong type) when Redis would refuse it
 * again, else the error as is (the caller retries).
 */
export function refusal(what: string, err: unknown, detail = ''): unknown {
  if (!isRefusal(err)) return err;
  return new BrokerRefusedError(`Redis refused ${what}: ${replyText(err)}${detail}`, { cause: err });
}

/** A key prefork reads and the Redis type it must hold (or not exist), as TYPE names it. */
export type TypedKey = readonly [key: string, type: string];

/**
 * refusal(), naming for WRONGTYPE the keys of `typed` that hold another
 * type than prefork's: Redis's reply does not say which (another program
 * wrote one of them). Asked of Redis only once the call has failed.
 */
export async function namedRefusal(
  redis: Redis,
  what: string,
  err: unknown,
  typed: readonly TypedKey[],
): Promise<unknown> {
  if (!isRefusal(err) || !isWrongType(err)) return refusal(what, err);
  let wrong: string[] = [];
  try {
    const pipe = redis.pipeline();
    for (const [key] of typed) pipe.type(key);
    const replies = (await pipe.exec()) ?? [];
    wrong = typed.flatMap(([key, type], i) => {
      const held = replies[i]?.[1];
      return typeof held === 'string' && held !== 'none' && held !== type ? [`${key} is a ${held}, not a ${type}`] : [];
    });
  } catch {
    // Best effort: the refusal is reported either way.
  }
  return refusal(what, err, wrong.length > 0 ? ` (${wrong.join('; ')})` : '');
}

/** How much of a failed command a Redis error keeps (ioredis attaches the command to its ReplyError). */
const KEPT_ARGS = 12;
const KEPT_ARG_CHARS = 120;

/**
 * Cuts the command ioredis attaches to an error reply (`err.command`: its
 * name and every argument) down to its name and the start of its
 * arguments. Logged as is, it carried a script's whole source (about 35 KB:
 * the first call of a script on a connection is an EVAL), or a job's
 * payload, into every log line of the error. `scriptName` names a script
 * by its source or hash.
 */
export function shedCommand(err: unknown, scriptName: (arg: unknown) => string | undefined): void {
  if (!(err instanceof Error)) return;
  const holder = err as Error & { command?: { name?: unknown; args?: unknown } };
  const command = holder.command;
  if (command === undefined || command === null || !Array.isArray(command.args)) return;
  const args = command.args as unknown[];
  const kept = args.slice(0, KEPT_ARGS).map((arg, i) => {
    const script = i === 0 ? scriptName(arg) : undefined;
    return script === undefined ? shortArg(arg) : `<script ${script}>`;
  });
  if (args.length > KEPT_ARGS) kept.push(`<${args.length - KEPT_ARGS} more arguments>`);
  holder.command = { name: command.name, args: kept };
}

function shortArg(arg: unknown): unknown {
  if (Buffer.isBuffer(arg)) return `<${arg.length} bytes>`;
  if (typeof arg === 'string' && arg.length > KEPT_ARG_CHARS)
    return `${arg.slice(0, KEPT_ARG_CHARS)}… <${arg.length} chars>`;
  return arg;
}
