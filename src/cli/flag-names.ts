import { describeValue, type OptionError } from '../errors.js';
import { UsageError } from './usage-error.js';

/** Library options whose flag is not simply their kebab-case name (`recent`: events' -n, --last). */
const RENAMED = new Map([
  ['processes', 'concurrency'],
  ['recent', 'last'],
]);

/** The flag that sets a library option: softTimeLimit → --soft-time-limit, backoff.delay → --backoff ($VARIABLE stays). */
export function flagOf(option: string): string {
  if (option.startsWith('$')) return option;
  const head = option.split('.')[0] ?? option;
  const name = RENAMED.get(head) ?? head;
  return `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/**
 * Option names a library message may mention, each worded as its flag in
 * the CLI's errors. Not "name" or "queue": in what a message expects they
 * are plain words ("a task name", "each queue once"), not options.
 */
const OPTION_WORDS =
  /\b(timeLimit|softTimeLimit|maxTasksPerChild|maxMemoryPerChild|prefetchMultiplier|maxRedeliveries|queueOrder|ignoreResult|trackStarted|jobLogLevel|metricsPort|metricsHost|healthPort|healthHost|processes|maxConcurrency|concurrency|autoscale|retries|backoff(?:\.\w+)?|delay|eta|strategy)\b/g;

/**
 * An OptionError from the library, reworded for someone who typed flags: it
 * names `--soft-time-limit`, not `softTimeLimit`, also in what was expected
 * (main.ts prints it, exit 2). The value is left as it was given.
 */
export function asFlagError(err: OptionError): UsageError {
  const head = `invalid option ${err.option}: ${describeValue(err.value)} (expected `;
  if (!err.message.startsWith(head) || !err.message.endsWith(')'))
    return new UsageError(err.message.replace(`invalid option ${err.option}`, `invalid ${flagOf(err.option)}`));
  const expected = err.message.slice(head.length, -1).replace(OPTION_WORDS, (word) => flagOf(word));
  return new UsageError(`invalid ${flagOf(err.option)}: ${describeValue(err.value)} (expected ${expected})`);
}

/** Both limits given: the soft one must fire first. Checked before anything starts, naming both flags. */
export function checkLimitFlags(timeLimit: number | undefined, softTimeLimit: number | undefined): void {
  if (timeLimit !== undefined && softTimeLimit !== undefined && softTimeLimit >= timeLimit)
    throw new UsageError(
      `--soft-time-limit (${softTimeLimit} ms) must be less than --time-limit (${timeLimit} ms): the soft limit fires first, or never`,
    );
}
