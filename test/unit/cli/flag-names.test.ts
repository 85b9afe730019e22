import { describe, expect, it } from 'vitest';
import { OptionError } from 'prefork';
import { asFlagError, flagOf } from '../../../dist/cli/flag-names.js';

/** A library OptionError reworded for the CLI: the flags named as typed, the rest of the message as it was. */
describe('asFlagError', () => {
  it('names the flag of the option, and of options mentioned in what was expected', () => {
    expect(asFlagError(new OptionError('softTimeLimit', 2000, 'less than timeLimit (1000 ms)')).message).toBe(
      'invalid --soft-time-limit: 2000 (expected less than --time-limit (1000 ms))',
    );
    expect(asFlagError(new OptionError('processes', 0, 'an integer from 1 to 4096')).message).toBe(
      'invalid --concurrency: 0 (expected an integer from 1 to 4096)',
    );
  });

  it('names events -n by its flag, --last (the option is `recent`)', () => {
    expect(flagOf('recent')).toBe('--last');
  });

  it('leaves "name" and "queue" in what was expected as words: they are no flags there', () => {
    expect(asFlagError(new OptionError('task', '', 'a task name')).message).toBe(
      'invalid --task: "" (expected a task name)',
    );
    expect(asFlagError(new OptionError('queues', 'a', 'each queue once')).message).toBe(
      'invalid --queues: "a" (expected each queue once)',
    );
  });
});
