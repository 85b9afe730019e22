import { checkLimitOrder, checkRetries, checkTimeLimit, throwOptionError as bad } from '../job-option-checks.js';
import type { ResolvedApplyOptions } from './job.js';

/**
 * Checks the options of one apply() call; every error names the option and
 * the value. Returns the options with the time limits in ms (a copy only when
 * a limit was given as a string like "5s"). This runs for every job the
 * Worker applies, so it allocates nothing in the common case.
 */
export function resolveApplyOptions(options: unknown): ResolvedApplyOptions | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    bad('apply options', options, 'an object');
  const o = options as Record<string, unknown>;
  for (const key in o) {
    const value = o[key];
    if (value === undefined) continue;
    switch (key) {
      case 'id':
      case 'queue':
        if (typeof value !== 'string') bad(key, value, 'a string');
        break;
      case 'retries':
        checkRetries(key, value, bad);
        break;
      case 'scheduledFor':
        if (typeof value !== 'number' || !Number.isFinite(value)) bad(key, value, 'epoch ms');
        break;
      case 'onStart':
      case 'onProgress':
        if (typeof value !== 'function') bad(key, value, 'a function');
        break;
      case 'timeLimit':
      case 'softTimeLimit':
        break;
      default:
        bad(
          key,
          value,
          'a known apply() option: id, queue, retries, scheduledFor, timeLimit, softTimeLimit, onStart, onProgress',
        );
    }
  }
  if (o.timeLimit === undefined && o.softTimeLimit === undefined) return o;
  const timeLimit = o.timeLimit === undefined ? undefined : checkTimeLimit('timeLimit', o.timeLimit, bad);
  const softTimeLimit =
    o.softTimeLimit === undefined ? undefined : checkTimeLimit('softTimeLimit', o.softTimeLimit, bad);
  checkLimitOrder(timeLimit, softTimeLimit, o.softTimeLimit, 'softTimeLimit', bad);
  if (timeLimit === o.timeLimit && softTimeLimit === o.softTimeLimit) return o;
  return { ...(o as ResolvedApplyOptions), timeLimit, softTimeLimit };
}
