import { InvalidArgumentError } from 'commander';
import { JOB_LOG_LEVELS, type JobLogLevel } from '../consumer/job-log.js';
import { parseQueues, QUEUE_ORDERS, type QueueOrder } from '../consumer/queue-selection.js';
import { checkDuration, checkSize, parseAutoscale, type Bad } from '../util/units.js';

/**
 * Flag parsers for commander. Each throws InvalidArgumentError with what was
 * expected; commander prefixes the flag and the value, and main.ts turns it
 * into exit code 2.
 */
export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new InvalidArgumentError('expected an integer >= 1');
  return Number(value);
}

export function nonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError('expected an integer >= 0');
  return Number(value);
}

/** The shared checks report through this: commander already names the flag and the value. */
const invalid: Bad = (_flag, _value, expected) => {
  throw new InvalidArgumentError(`expected ${expected}`);
};

/** A positive duration such as 500ms, 30s, 5m or 1h. */
export function duration(value: string): number {
  return checkDuration('', value, 'positive', invalid);
}

/** A positive duration short enough for a timer (a time limit, a wait). */
export function timerDuration(value: string): number {
  return checkDuration('', value, 'timer', invalid);
}

export function size(value: string): number {
  return checkSize('', value, invalid);
}

export function autoscale(value: string): string {
  if (parseAutoscale(value) === undefined)
    throw new InvalidArgumentError('expected MAX,MIN integers with MAX >= 1 and 0 <= MIN <= MAX, e.g. 10,3');
  return value;
}

export function strategy(value: string): 'fair' | 'fcfs' {
  if (value !== 'fair' && value !== 'fcfs') throw new InvalidArgumentError('expected fair or fcfs');
  return value;
}

export function queueOrder(value: string): QueueOrder {
  if (!(QUEUE_ORDERS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected ${QUEUE_ORDERS.join(', ')}`);
  return value as QueueOrder;
}

export function queues(value: string): string {
  try {
    parseQueues(value);
  } catch {
    throw new InvalidArgumentError(
      'expected name[:weight],... with names of letters, digits, _ - . and integer weights >= 1',
    );
  }
  return value;
}

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
export function logLevel(value: string): string {
  if (!LEVELS.includes(value)) throw new InvalidArgumentError(`expected one of ${LEVELS.join(', ')}`);
  return value;
}

export function jobLogLevel(value: string): JobLogLevel {
  if (!(JOB_LOG_LEVELS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected ${JOB_LOG_LEVELS.join(' or ')}`);
  return value as JobLogLevel;
}

export function brokerUrl(value: string): string {
  if (!/^(redis|rediss|memory):\/\//.test(value))
    throw new InvalidArgumentError('expected a redis://, rediss:// or memory:// URL');
  return value;
}

export function queueName(value: string): string {
  if (!/^[A-Za-z0-9_.-]+$/.test(value))
    throw new InvalidArgumentError('expected a queue name of letters, digits, _ - .');
  return value;
}

/** A task argument on the command line: JSON, or a bare word taken as a string. */
export function jsonArg(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
