import { OptionError } from '../errors.js';
import type { ListedState } from './types.js';
import { integerRange, parseInteger } from '../util/units.js';

const STATES: readonly ListedState[] = ['waiting', 'delayed', 'dead'];

/** Most jobs one page may hold (`listJobs`): a page is one bounded read. */
export const PAGE_LIMIT_MAX = 10_000;

/** What a page's limit must be. */
export const PAGE_LIMIT_EXPECTED = integerRange(1, PAGE_LIMIT_MAX);

/** Throws an OptionError naming `state` or `limit` unless `state` is one listJobs knows and `limit` an integer in [1, PAGE_LIMIT_MAX]. */
export function checkPage(state: ListedState, limit: number): void {
  if (!STATES.includes(state)) throw new OptionError('state', state, STATES.join(', '));
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT_MAX)
    throw new OptionError('limit', limit, PAGE_LIMIT_EXPECTED);
}

/** A page limit as typed (a flag, a query parameter), or undefined when it is not one checkPage takes. */
export function parsePageLimit(text: string): number | undefined {
  const limit = parseInteger(text);
  return limit !== undefined && limit >= 1 && limit <= PAGE_LIMIT_MAX ? limit : undefined;
}
