import type { BrokerRateLimits } from '../../broker/types.js';
import { DEFAULT_RATE, rateSetting } from '../../broker/rate-setting.js';
import { OptionError } from '../../errors.js';
import { askNodes, NoSuchNodeError, StoredNotToldError, type NodeAnswer, type NodeAsker } from '../control-request.js';
import { printJson } from '../print.js';
import { UsageError } from '../usage-error.js';

/** `control rate-limit <task> <rate|off>`'s arguments, the rate normalized; a UsageError names a bad one. */
export function parseRateLimitArgs(rest: readonly string[]): [task: string, rate: string] {
  const [task, rate] = rest;
  if (task === undefined || rate === undefined || rest.length !== 2)
    throw new UsageError(
      `control rate-limit: expected a task and a rate (e.g. 100/s, 10/m, 1000/h), off or default, got ${rest.length === 0 ? 'none' : `'${rest.join(' ')}'`}`,
    );
  try {
    return [task, rateSetting(task, rate)?.text ?? DEFAULT_RATE];
  } catch (err) {
    if (!(err instanceof OptionError)) throw err;
    // rateSetting names what it refused (the task or the rate) and what it takes, in the words of a flag's refusal.
    const arg = err.option === 'task' ? task : rate;
    throw new UsageError(`control rate-limit: argument '${arg}' is invalid. expected ${err.expected}`);
  }
}

/**
 * Stores the task's rate in the broker (every node's buckets read it there,
 * a node that starts later reads it at start), then tells each live node at
 * once and prints their replies. Returns whether every live node replied ok.
 */
export async function setRateLimit(
  broker: NodeAsker & Pick<BrokerRateLimits, 'setRateLimit'>,
  task: string,
  rate: string,
  timeoutMs: number,
  json: boolean,
  print: (answers: readonly NodeAnswer[]) => boolean,
): Promise<boolean> {
  const respaced = await broker.setRateLimit(task, rate);
  const line =
    rate === DEFAULT_RATE
      ? `rate limit of ${task}: the one set at run time dropped (cluster-wide; jobs follow their own or their task's rateLimit again)`
      : `rate limit of ${task}: ${rate} (cluster-wide; ${respaced} waiting jobs spaced again)`;
  let answers: NodeAnswer[];
  try {
    answers = await askNodes(broker, 'rate-limit', [task, rate], undefined, timeoutMs);
  } catch (err) {
    // Stored all the same: say so rather than only the broker's error.
    if (!(err instanceof NoSuchNodeError)) throw new StoredNotToldError(line, err);
    if (json) printJson({ task, rateLimit: rate, respaced, nodes: [] });
    else process.stdout.write(`${line}; no live worker nodes: they read it when they start\n`);
    return true;
  }
  if (!json) process.stdout.write(`${line}\n`);
  return print(answers);
}
