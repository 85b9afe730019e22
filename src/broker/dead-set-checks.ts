import { OptionError } from '../errors.js';

const ACTIONS: readonly string[] = ['retry', 'delete'];

/**
 * Throws an OptionError naming `action` or `ids` unless the action is one
 * `changeDead` knows and `ids` is undefined (all) or an array of job ids.
 * Reached from JavaScript, an unknown action made the memory broker drop
 * the dead jobs it matched (it only requeues on 'retry'), and a string for
 * `ids` was read as its characters, one id each.
 */
export function checkDeadChange(action: unknown, ids: unknown): void {
  if (typeof action !== 'string' || !ACTIONS.includes(action)) throw new OptionError('action', action, 'retry, delete');
  if (ids === undefined) return;
  if (!Array.isArray(ids)) throw new OptionError('ids', ids, 'an array of job ids, or undefined for every dead job');
  for (const id of ids as unknown[])
    if (typeof id !== 'string' || id === '') throw new OptionError('ids', id, 'a job id: a non-empty string');
}

/**
 * Throws an OptionError naming `limit` unless it is an integer >= 0 (0: none
 * listed). Redis refused anything else with its own words, while the memory
 * broker listed every dead job for NaN or Infinity.
 */
export function checkDeadLimit(limit: unknown): void {
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0)
    throw new OptionError('limit', limit, 'an integer >= 0');
}
