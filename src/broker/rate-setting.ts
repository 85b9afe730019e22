import { OptionError } from '../errors.js';
import { parseRate } from '../util/units.js';

/** A rate set at run time as stored: its interval (0 = off) and its text; OptionError for a bad one. */
export function rateSetting(task: string, rate: string): { interval: number; text: string } {
  if (typeof task !== 'string' || task === '') throw new OptionError('task', task, 'a task name');
  if (rate === 'off') return { interval: 0, text: 'off' };
  const parsed = typeof rate === 'string' ? parseRate(rate) : undefined;
  if (parsed === undefined)
    throw new OptionError('rateLimit', rate, 'a rate like "100/s", "10/m" or "1000/h", or "off"');
  return { interval: parsed.intervalMs, text: parsed.text };
}
