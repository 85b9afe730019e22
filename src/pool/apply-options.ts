import { OptionError } from '../errors.js';
import type { ResolvedApplyOptions } from './job.js';
import { optionalDuration } from './options.js';

/**
 * Checks the options of one apply() call; every error names the option and
 * the value. Returns the options with the time limits in ms (a copy only when
 * a limit was given as a string like "5s"). This runs for every job the
 * Worker applies, so it allocates nothing in the common case.
 */
export function resolveApplyOptions(options: unknown): ResolvedApplyOptions | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new OptionError('apply options', options, 'an object');
  const o = options as Record<string, unknown>;
  for (const key in o) {
    switch (key) {
      case 'id':
      case 'queue':
        if (o[key] !== undefined && typeof o[key] !== 'string') throw new OptionError(key, o[key], 'a string');
        break;
      case 'retries':
        if (o.retries !== undefined && (!Number.isInteger(o.retries) || (o.retries as number) < 0)) throw new OptionError('retries', o.retries, 'an integer >= 0');
        break;
      case 'onStart':
        if (o.onStart !== undefined && typeof o.onStart !== 'function') throw new OptionError('onStart', o.onStart, 'a function');
        break;
      case 'timeLimit':
      case 'softTimeLimit':
        break;
      default:
        throw new OptionError(key, o[key], 'a known apply() option: id, queue, retries, timeLimit, softTimeLimit, onStart');
    }
  }
  if (o.timeLimit === undefined && o.softTimeLimit === undefined) return options as ResolvedApplyOptions;
  const timeLimit = optionalDuration('timeLimit', o.timeLimit, 'timer');
  const softTimeLimit = optionalDuration('softTimeLimit', o.softTimeLimit, 'timer');
  if (timeLimit !== undefined && softTimeLimit !== undefined && softTimeLimit >= timeLimit) {
    throw new OptionError('softTimeLimit', o.softTimeLimit, `less than timeLimit (${timeLimit} ms)`);
  }
  if (timeLimit === o.timeLimit && softTimeLimit === o.softTimeLimit) return options as ResolvedApplyOptions;
  return { ...(options as ResolvedApplyOptions), timeLimit, softTimeLimit };
}
