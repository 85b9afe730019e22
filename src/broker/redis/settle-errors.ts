import { BrokerRefusedError, messageOf } from '../../errors.js';

/**
 * Redis replies that say "not now" rather than "never": the server is busy,
 * loading, failing over or out of memory. Sending the same command later can
 * succeed, so these are retried like a lost connection.
 */
const TRANSIENT_REPLIES =
  /^(LOADING|BUSY|TRYAGAIN|MASTERDOWN|READONLY|CLUSTERDOWN|NOREPLICAS|MISCONF|OOM|NOSCRIPT|MOVED|ASK)\b/;

/**
 * True when sending the same settlements again would fail the same way: the
 * broker understood the request and refused it (a Redis error reply such as
 * WRONGTYPE or a script error), or the client could not even build it (a
 * TypeError / RangeError while encoding). Anything else (the connection is
 * down, a command timed out) is transient.
 */
function isDeterministic(err: unknown): boolean {
  if (err instanceof TypeError || err instanceof RangeError) return true;
  if (!(err instanceof Error) || err.name !== 'ReplyError') return false;
  return !TRANSIENT_REPLIES.test(err.message);
}

/**
 * A settle failure as the Broker contract has it: a BrokerRefusedError when
 * sending the same settlements again would fail the same way (the Acker then
 * splits the batch to find the settlement at fault instead of retrying it
 * for ever), else the error as is (transient: the batch is sent again).
 */
export function settleError(err: unknown): unknown {
  if (!isDeterministic(err)) return err;
  const what = err instanceof TypeError || err instanceof RangeError ? 'cannot be encoded' : 'were refused by Redis';
  return new BrokerRefusedError(`the settlements ${what}: ${messageOf(err)}`, { cause: err });
}
