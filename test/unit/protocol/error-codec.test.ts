import { describe, expect, it } from 'vitest';
import {
  PayloadDecodeError,
  RemoteTaskError,
  ResultSerializationError,
  Retry,
  SoftTimeLimitExceeded,
  UnknownTaskError,
} from 'prefork';
import { decodeBody, encodeBody } from '../../../dist/protocol/codec.js';
import { deserializeError, serializeError } from '../../../dist/protocol/error-codec.js';
import type { SerializedError } from '../../../dist/job-types.js';

/** serialize → msgpack → bytes → msgpack → deserialize: the trip an error makes from child to parent. */
function roundTrip(err: unknown): Error {
  const wire = decodeBody(encodeBody(serializeError(err))) as SerializedError;
  return deserializeError(wire);
}

class QuotaError extends Error {
  override name = 'QuotaError';
  limit = 10;
  account = { id: 'acct-1', plan: 'free' };
}

describe('error codec', () => {
  it('keeps name, message and stack of a plain Error', () => {
    const original = new Error('plain failure');
    const back = roundTrip(original);
    expect(back).toBeInstanceOf(Error);
    expect(back.name).toBe('Error');
    expect(back.message).toBe('plain failure');
    expect(back.stack).toBe(original.stack);
  });

  it('keeps a custom class name and its own properties', () => {
    const back = roundTrip(new QuotaError('over quota')) as RemoteTaskError;
    expect(back.name).toBe('QuotaError');
    expect(back.message).toBe('over quota');
    expect(back.limit).toBe(10);
    expect(back.account).toEqual({ id: 'acct-1', plan: 'free' });
  });

  it('keeps a nested cause chain as errors with their own properties', () => {
    const root = Object.assign(new RangeError('root'), { depth: 2 });
    const inner = Object.assign(new TypeError('inner', { cause: root }), { depth: 1 });
    const outer = new Error('outer', { cause: inner });
    const back = roundTrip(outer);
    const backInner = back.cause as Error & { depth: number; cause: unknown };
    expect(backInner).toBeInstanceOf(Error);
    expect(backInner.name).toBe('TypeError');
    expect(backInner.message).toBe('inner');
    expect(backInner.depth).toBe(1);
    expect(backInner.stack).toBe(inner.stack);
    const backRoot = backInner.cause as Error & { depth: number };
    expect(backRoot).toBeInstanceOf(Error);
    expect(backRoot.name).toBe('RangeError');
    expect(backRoot.message).toBe('root');
    expect(backRoot.depth).toBe(2);
  });

  it('keeps a cause that is not an error', () => {
    expect(roundTrip(new Error('outer', { cause: { status: 503 } })).cause).toEqual({ status: 503 });
    expect(roundTrip(new Error('outer', { cause: 'text cause' })).cause).toBe('text cause');
  });

  it('drops own properties msgpack cannot carry and keeps the rest', () => {
    const err = Object.assign(new Error('mixed'), { fn: () => 1, sym: Symbol('s'), kept: 'yes' });
    const back = roundTrip(err) as RemoteTaskError;
    expect(back.kept).toBe('yes');
    expect('fn' in back).toBe(false);
    expect('sym' in back).toBe(false);
  });

  it('turns a thrown non-error into an Error that shows the value', () => {
    const back = roundTrip('just a string');
    expect(back).toBeInstanceOf(Error);
    expect(back.name).toBe('Error');
    expect(back.message).toContain('just a string');
  });

  it('brings SoftTimeLimitExceeded back as its class', () => {
    const back = roundTrip(new SoftTimeLimitExceeded('too slow'));
    expect(back).toBeInstanceOf(SoftTimeLimitExceeded);
    expect(back.message).toBe('too slow');
    expect((back as SoftTimeLimitExceeded).code).toBe('PREFORK_SOFT_TIME_LIMIT');
  });

  it('brings UnknownTaskError back as its class with the task name', () => {
    const original = new UnknownTaskError('nope', ['echo']);
    const back = roundTrip(original);
    expect(back).toBeInstanceOf(UnknownTaskError);
    expect((back as UnknownTaskError).task).toBe('nope');
    expect(back.message).toBe(original.message);
  });

  it('brings ResultSerializationError and PayloadDecodeError back as their classes with the task name', () => {
    const rse = roundTrip(new ResultSerializationError('render', 'a function cannot be serialized'));
    expect(rse).toBeInstanceOf(ResultSerializationError);
    expect((rse as ResultSerializationError).task).toBe('render');
    expect(rse.message).toContain('a function cannot be serialized');
    const pde = roundTrip(new PayloadDecodeError('parse', 'unexpected end'));
    expect(pde).toBeInstanceOf(PayloadDecodeError);
    expect((pde as PayloadDecodeError).task).toBe('parse');
    expect(pde.message).toContain('unexpected end');
  });

  it('brings Retry back as its class with its delay', () => {
    const back = roundTrip(new Retry({ delay: 1500, message: 'later' }));
    expect(back).toBeInstanceOf(Retry);
    expect((back as Retry).delay).toBe(1500);
    expect(back.message).toBe('later');
  });

  it('rebuilds unknown error names as RemoteTaskError, an Error', () => {
    const back = roundTrip(new QuotaError('q'));
    expect(back).toBeInstanceOf(RemoteTaskError);
    expect(back).toBeInstanceOf(Error);
  });
});
