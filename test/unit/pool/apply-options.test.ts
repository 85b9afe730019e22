import { describe, expect, it } from 'vitest';
import { OptionError } from 'prefork';
import { resolveApplyOptions } from '../../../dist/pool/apply-options.js';

function rejectionOf(options: unknown): OptionError {
  try {
    resolveApplyOptions(options);
  } catch (err) {
    expect(err).toBeInstanceOf(OptionError);
    return err as OptionError;
  }
  throw new Error(`resolveApplyOptions accepted ${JSON.stringify(options)}`);
}

describe('resolveApplyOptions', () => {
  it('passes valid options through as they are (no copy when limits are numbers)', () => {
    const onStart = (): void => undefined;
    const options = { id: 'j1', queue: 'q', retries: 2, timeLimit: 5000, softTimeLimit: 1000, onStart };
    expect(resolveApplyOptions(options)).toBe(options);
    expect(resolveApplyOptions(undefined)).toBeUndefined();
    expect(resolveApplyOptions({})).toEqual({});
  });

  it('turns duration strings into ms', () => {
    expect(resolveApplyOptions({ id: 'x', timeLimit: '5s', softTimeLimit: '250ms' })).toEqual({
      id: 'x',
      timeLimit: 5000,
      softTimeLimit: 250,
    });
  });

  it('rejects an unknown option, naming it', () => {
    const err = rejectionOf({ id: 'x', timelimit: 5000 });
    expect(err.option).toBe('timelimit');
    expect(err.message).toContain('timelimit');
  });

  it('rejects values of the wrong type or out of range, naming the option and the value', () => {
    expect(rejectionOf({ timeLimit: 'soon' })).toMatchObject({ option: 'timeLimit', value: 'soon' });
    expect(rejectionOf({ timeLimit: 0 })).toMatchObject({ option: 'timeLimit', value: 0 });
    expect(rejectionOf({ timeLimit: 2 ** 31 })).toMatchObject({ option: 'timeLimit', value: 2 ** 31 });
    expect(rejectionOf({ softTimeLimit: -1 })).toMatchObject({ option: 'softTimeLimit' });
    expect(rejectionOf({ timeLimit: 1000, softTimeLimit: '1s' })).toMatchObject({
      option: 'softTimeLimit',
      value: '1s',
    });
    expect(rejectionOf({ retries: 1.5 })).toMatchObject({ option: 'retries', value: 1.5 });
    expect(rejectionOf({ retries: -1 })).toMatchObject({ option: 'retries' });
    expect(rejectionOf({ id: 7 })).toMatchObject({ option: 'id', value: 7 });
    expect(rejectionOf({ queue: ['a'] })).toMatchObject({ option: 'queue' });
    expect(rejectionOf({ onStart: 'call me' })).toMatchObject({ option: 'onStart' });
    expect(rejectionOf('fast').option).toBe('apply options');
    expect(rejectionOf(null).option).toBe('apply options');
  });
});
