/**
 * The error catalogue: every error class prefork exports is a PreforkError
 * with its own stable code, and each one that crosses a pipe (child → parent)
 * or Redis (worker → client) comes back as its own class.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as prefork from 'prefork';
import { PreforkError, RemoteTaskError } from 'prefork';
import { decodeBody, encodeBody } from '../../dist/protocol/codec.js';
import { deserializeError, serializeError } from '../../dist/protocol/error-codec.js';
import { decodeResult, encodeResult } from '../../dist/broker/redis/entry-codec.js';
import { NoSuchNodeError, StoredNotToldError } from '../../dist/cli/control-request.js';
import { UsageError } from '../../dist/cli/usage-error.js';
import type { SerializedError } from '../../dist/job-types.js';

type ErrorClass = (abstract new (...args: never[]) => Error) & { code?: string };

/** Every Error class the package exports, by name. */
const exported: [string, ErrorClass][] = Object.entries(prefork as Record<string, unknown>).flatMap(
  ([name, value]): [string, ErrorClass][] =>
    typeof value === 'function' && (value as { prototype: unknown }).prototype instanceof Error
      ? [[name, value as ErrorClass]]
      : [],
);

/** One instance of each catalogue class, as prefork makes them. */
const samples: Record<string, () => PreforkError> = {
  PreforkError: () => new prefork.PreforkError('something went wrong'),
  OptionError: () => new prefork.OptionError('retries', -1, 'an integer >= 0', 'defineTasks(): task "t"'),
  InvalidStateError: () => new prefork.InvalidStateError('start() called on a worker that is running'),
  WorkerLostError: () => new prefork.WorkerLostError(1234, null, 'SIGKILL', 'protocol error: bad frame'),
  TimeLimitExceeded: () => new prefork.TimeLimitExceeded(400, 'slow'),
  SoftTimeLimitExceeded: () => new prefork.SoftTimeLimitExceeded('task slow exceeded its soft time limit'),
  UnknownTaskError: () => new prefork.UnknownTaskError('nope', ['echo']),
  ResultSerializationError: () => new prefork.ResultSerializationError('render', 'a function cannot be serialized'),
  PayloadDecodeError: () => new prefork.PayloadDecodeError('parse', 'unexpected end'),
  ErrorSerializationError: () =>
    new prefork.ErrorSerializationError('render', 'reading its name threw: name getter boom'),
  ArgumentSerializationError: () => new prefork.ArgumentSerializationError('add', new TypeError('cycle')),
  ArgumentsTooLargeError: () => new prefork.ArgumentsTooLargeError('resize', 70_000_000, 67_108_864),
  MalformedJobError: () => new prefork.MalformedJobError('malformed job: no payload'),
  ProtocolError: () => new prefork.ProtocolError('child 12 sent an unknown message type 99'),
  FrameTooLargeError: () => new prefork.FrameTooLargeError(65, 64),
  AppLoadError: () => new prefork.AppLoadError('/srv/tasks.mjs', 'SyntaxError: Unexpected token'),
  PoolFailedError: () => new prefork.PoolFailedError('pool failed: child processes died 11 times'),
  ConsumerFailedError: () => new prefork.ConsumerFailedError(new TypeError('a reply it cannot handle')),
  PoolClosedError: () => new prefork.PoolClosedError(),
  WorkerStoppedError: () => new prefork.WorkerStoppedError(),
  JobWithdrawnError: () => new prefork.JobWithdrawnError(),
  ResultTimeoutError: () => new prefork.ResultTimeoutError('job-1', 500),
  ResultGoneError: () => new prefork.ResultGoneError('job-1'),
  NoResultError: () => new prefork.NoResultError('job-1', { task: 'quiet', state: 'SUCCESS' }),
  JobFailedError: () => new prefork.JobFailedError('job-1'),
  RevokedError: () => new prefork.RevokedError('job-1', true),
  WorkflowError: () =>
    new prefork.WorkflowError(
      'flow-1',
      { id: 'job-2', task: 'resize', error: { name: 'Error', message: 'bad image', code: 'E_IMG' } },
      [{ kind: 'task', state: 'SUCCESS', id: 'job-1', task: 'resize', value: 1 }],
    ),
  ClientClosedError: () => new prefork.ClientClosedError(),
  BrokerUnavailableError: () => new prefork.BrokerUnavailableError('redis://127.0.0.1:1', 'connection refused'),
  BrokerOfflineError: () => new prefork.BrokerOfflineError('redis://127.0.0.1:1', 'the connection is down'),
  BrokerTimeoutError: () => new prefork.BrokerTimeoutError('redis://127.0.0.1:6379', 'the script enqueueJobs', 10_000),
  BrokerClosedError: () => new prefork.BrokerClosedError(),
  BrokerRefusedError: () => new prefork.BrokerRefusedError('the settlements were refused by Redis: WRONGTYPE'),
  BrokerFullError: () =>
    new prefork.BrokerFullError('redis://127.0.0.1:6379', 'Redis at redis://127.0.0.1:6379 is out of memory', {
      cause: new Error('OOM command not allowed'),
    }),
  EnqueueIncompleteError: () =>
    new prefork.EnqueueIncompleteError(['a'], ['b'], new Error('OOM command not allowed'), ['c']),
  EndpointError: () =>
    new prefork.EndpointError(
      '0.0.0.0',
      9464,
      ['/metrics'],
      Object.assign(new Error('in use'), { code: 'EADDRINUSE' }),
    ),
  Retry: () => new prefork.Retry({ delay: 1500, message: 'later' }),
  MaxRetriesExceededError: () =>
    new prefork.MaxRetriesExceededError('retries spent (3): later', { cause: new prefork.Retry({ message: 'later' }) }),
};

/** serialize → msgpack → deserialize: child to parent over the pipe. */
function overPipe(err: unknown): Error {
  return deserializeError(decodeBody(encodeBody(serializeError(err))) as SerializedError);
}

/** A FAILURE record as the Worker stores it in Redis and the Client reads it back. */
function overRedis(err: unknown): Error {
  const stored = encodeResult({
    id: 'j',
    task: 't',
    queue: 'q',
    state: 'FAILURE',
    retries: 0,
    error: serializeError(err),
  });
  return deserializeError(decodeResult(stored, 'res:').error as SerializedError);
}

describe('the error catalogue', () => {
  it('every exported error class is a PreforkError with a distinct code, RemoteTaskError (the task’s own error) aside', () => {
    const classes: [string, ErrorClass][] = [
      ...exported,
      ['UsageError', UsageError],
      ['NoSuchNodeError', NoSuchNodeError],
      ['StoredNotToldError', StoredNotToldError],
    ];
    const codes = new Map<string, string>();
    for (const [name, cls] of classes) {
      if (cls === RemoteTaskError) {
        expect(cls.prototype).not.toBeInstanceOf(PreforkError);
        continue;
      }
      expect(cls === PreforkError || cls.prototype instanceof PreforkError, `${name} is a PreforkError`).toBe(true);
      expect(cls.code, `${name}.code`).toMatch(/^PREFORK_[A-Z_]+$/);
      expect(codes.get(cls.code as string), `${name}'s code ${cls.code} is its own`).toBeUndefined();
      codes.set(cls.code as string, name);
    }
    expect(codes.size).toBeGreaterThanOrEqual(Object.keys(samples).length + 3);
  });

  it('has a sample for every class it exports (so the trips below cover them all)', () => {
    const names = exported.map(([name]) => name).filter((name) => name !== 'RemoteTaskError');
    expect(names.sort()).toEqual(Object.keys(samples).sort());
  });

  it('the table of errors in docs/failure-modes.md lists every class the package exports, with its code', () => {
    const table = readFileSync(new URL('../../docs/failure-modes.md', import.meta.url), 'utf8');
    const rows = new Map<string, string>();
    for (const [, name = '', code = ''] of table.matchAll(/^\| `(\w+)` \| `(PREFORK_[A-Z_]+)` \|/gm))
      rows.set(name, code);
    // PreforkError is the table's subject, said in the prose above it; RemoteTaskError is the task's own error.
    const classes = exported.filter(([, cls]) => cls !== PreforkError && cls !== RemoteTaskError);
    expect(classes.map(([name]) => [name, rows.get(name)])).toEqual(classes.map(([name, cls]) => [name, cls.code]));
  });

  it.each(Object.keys(samples))('%s: an instance carries its class code and name', (name) => {
    const err = (samples[name] as () => PreforkError)();
    const cls = (prefork as unknown as Record<string, ErrorClass>)[name] as ErrorClass;
    expect(err.code).toBe(cls.code);
    expect(err.name).toBe(name);
    expect(err).toBeInstanceOf(Error);
  });

  it.each(Object.keys(samples))('%s comes back as its own class over the pipe and over Redis', (name) => {
    const original = (samples[name] as () => PreforkError)();
    const cls = (prefork as unknown as Record<string, ErrorClass>)[name] as ErrorClass;
    for (const back of [overPipe(original), overRedis(original), overRedis(overPipe(original))]) {
      expect(back).toBeInstanceOf(cls);
      expect(back).toBeInstanceOf(PreforkError);
      expect(back).toBeInstanceOf(Error);
      expect(back.name).toBe(name);
      expect(back.message).toBe(original.message);
      expect(back.stack).toBe(original.stack);
      // Its own fields too (code, limitMs, exitCode, task, option...).
      for (const key of Object.keys(original)) {
        if (key === 'name') continue;
        expect((back as unknown as Record<string, unknown>)[key], `${name}.${key}`).toEqual(
          (original as unknown as Record<string, unknown>)[key],
        );
      }
    }
  });

  it('keeps the cause of a prefork error, rebuilt as an error', () => {
    const back = overPipe(samples.ArgumentSerializationError!()) as Error & { cause: Error };
    expect(back.cause).toBeInstanceOf(Error);
    expect(back.cause.message).toBe('cycle');
  });

  it('a task error that only borrows a prefork name (no matching code) stays the task’s: RemoteTaskError', () => {
    const impostor = Object.assign(new Error('not really'), { name: 'TimeLimitExceeded' });
    const back = overPipe(impostor);
    expect(back).toBeInstanceOf(RemoteTaskError);
    expect(back).not.toBeInstanceOf(prefork.TimeLimitExceeded);
    expect(back.name).toBe('TimeLimitExceeded');
    const wrongCode = Object.assign(new Error('not really'), { name: 'Retry', code: 'PREFORK_TIME_LIMIT' });
    expect(overPipe(wrongCode)).toBeInstanceOf(RemoteTaskError);
  });
});
