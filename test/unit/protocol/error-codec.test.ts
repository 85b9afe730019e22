import { describe, expect, it } from 'vitest';
import {
  ErrorSerializationError,
  PayloadDecodeError,
  RemoteTaskError,
  ResultSerializationError,
  Retry,
  SoftTimeLimitExceeded,
  UnknownTaskError,
} from 'prefork';
import { decodeBody, encodeBody } from '../../../dist/protocol/codec.js';
import { deserializeError, serializeError } from '../../../dist/protocol/error-codec.js';
import { messageOf } from '../../../dist/errors.js';
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

  describe('a thrown value whose reads throw', () => {
    const boom = (what: string) => (): never => {
      throw new Error(what);
    };
    const trapAll = (target: object): object =>
      new Proxy(target, { get: boom('get trap'), ownKeys: boom('ownKeys trap'), getPrototypeOf: boom('proto trap') });

    it.each([
      [
        'a name getter',
        Object.defineProperty(new Error('x'), 'name', { get: boom('name boom') }),
        'name threw: name boom',
      ],
      [
        'a message getter',
        Object.defineProperty(new Error('x'), 'message', { get: boom('message boom') }),
        'message threw: message boom',
      ],
      ['a Proxy whose traps throw', trapAll({}), 'prototype threw: proto trap'],
      ['an object whose toString throws', { toString: boom('toString boom') }, 'string form threw: toString boom'],
      ['an object without a prototype', Object.create(null) as object, 'string form threw: '],
    ])('%s: replaced by ErrorSerializationError saying why, never a throw', (_, thrown, why) => {
      const back = roundTrip(thrown);
      expect(back).toBeInstanceOf(ErrorSerializationError);
      expect(back.message).toContain(`the value thrown cannot be read: reading its ${why}`);
      expect(deserializeError(serializeError(thrown, 'resize')).message).toMatch(
        /^the value task resize threw cannot be read/,
      );
    });

    it('a cause, stack or property that cannot be read is left out; the name and message stay', () => {
      const err = new RangeError('kept');
      Object.defineProperty(err, 'cause', { get: boom('cause boom') });
      Object.defineProperty(err, 'stack', { get: boom('stack boom') });
      Object.defineProperty(err, 'extra', { get: boom('extra boom'), enumerable: true });
      const back = roundTrip(err) as RemoteTaskError;
      expect(back).toMatchObject({ name: 'RangeError', message: 'kept' });
      expect(back.cause).toBe('the cause cannot be read: reading it threw: cause boom');
      expect('extra' in back).toBe(false);
    });

    it('an error whose own keys cannot be listed keeps its name and message; an unreadable cause is replaced', () => {
      const listless = new Proxy(new Error('listless'), { ownKeys: boom('ownKeys trap') });
      expect(roundTrip(listless)).toMatchObject({ name: 'Error', message: 'listless' });
      const back = roundTrip(new Error('outer', { cause: trapAll({}) }));
      expect(back.message).toBe('outer');
      expect(back.cause).toBeInstanceOf(ErrorSerializationError);
    });

    it('messageOf never throws either', () => {
      expect(messageOf(trapAll({}))).toBe('(object that cannot be read: proto trap)');
      expect(messageOf({ toString: boom('toString boom') })).toBe('(object that cannot be read: toString boom)');
      expect(messageOf(Object.defineProperty(new Error('x'), 'message', { get: boom('m boom') }))).toBe(
        '(object that cannot be read: m boom)',
      );
      // What a failed read threw cannot be read either: said so, without a second try.
      const throwing = (value: unknown) => (): never => {
        throw value;
      };
      for (const thrown of [Object.create(null) as unknown, { toString: boom('toString boom') }])
        expect(messageOf({ toString: throwing(thrown) })).toBe(
          '(object that cannot be read: something that cannot be read either)',
        );
    });
  });

  it('rebuilds unknown error names as RemoteTaskError, an Error', () => {
    const back = roundTrip(new QuotaError('q'));
    expect(back).toBeInstanceOf(RemoteTaskError);
    expect(back).toBeInstanceOf(Error);
  });
});
