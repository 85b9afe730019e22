import { OptionError } from '../errors.js';
import { parseRate } from '../util/units.js';

/** The rate that drops a rate set at run time: the jobs follow their own `rateLimit` again, or their task's. */
export const DEFAULT_RATE = 'default';

/**
 * A rate set at run time as stored: its interval (0 = off) and its text;
 * undefined for "default" (nothing stored: the override goes); OptionError
 * for a bad one.
 */
export function rateSetting(task: string, rate: string): { interval: number; text: string } | undefined {
  if (typeof task !== 'string' || task === '') throw new OptionError('task', task, 'a task name');
  if (rate === DEFAULT_RATE) return undefined;
  if (rate === 'off') return { interval: 0, text: 'off' };
  const parsed = typeof rate === 'string' ? parseRate(rate) : undefined;
  if (parsed === undefined)
    throw new OptionError(
      'rateLimit',
      rate,
      'a rate like "100/s", "10/m" or "1000/h", "off", or "default" (the task\'s own limit again)',
    );
  return { interval: parsed.intervalMs, text: parsed.text };
}
