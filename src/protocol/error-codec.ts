import * as catalogue from '../errors.js';
import type { SerializedError } from '../job-types.js';
import { encodeBody } from './codec.js';

const SKIPPED_PROPS = new Set(['name', 'message', 'stack']);
/** Causes kept below an error: a cause chain that loops (err.cause = err) stops here. */
const MAX_CAUSE_DEPTH = 8;

/** Every PreforkError class by name: an error that crossed a pipe or Redis comes back as its own class. */
const CLASSES = new Map<string, typeof catalogue.PreforkError>();
for (const value of Object.values(catalogue)) {
  if (
    typeof value === 'function' &&
    (value === catalogue.PreforkError || value.prototype instanceof catalogue.PreforkError)
  )
    CLASSES.set(value.name, value as typeof catalogue.PreforkError);
}

/** Turns anything a task threw into the wire form; own properties that msgpack cannot carry are dropped. */
export function serializeError(err: unknown, depth = 0): SerializedError {
  if (!(err instanceof Error)) {
    return { name: 'Error', message: `non-error thrown: ${safeString(err)}` };
  }
  const out: SerializedError = {
    name: typeof err.name === 'string' ? err.name : 'Error',
    message: typeof err.message === 'string' ? err.message : safeString(err.message),
  };
  if (typeof err.stack === 'string') out.stack = err.stack;
  const props: Record<string, unknown> = {};
  let any = false;
  for (const key of Object.keys(err)) {
    if (SKIPPED_PROPS.has(key)) continue;
    let value: unknown;
    try {
      value = (err as unknown as Record<string, unknown>)[key];
    } catch {
      continue;
    }
    if (!isEncodable(value)) continue;
    defineOwn(props, key, value);
    any = true;
  }
  if (err.cause !== undefined && !Object.hasOwn(props, 'cause')) {
    const cause: unknown = err.cause;
    defineOwn(
      props,
      'cause',
      cause instanceof Error
        ? depth < MAX_CAUSE_DEPTH
          ? serializeError(cause, depth + 1)
          : { name: 'Error', message: 'cause chain too deep' }
        : isEncodable(cause)
          ? cause
          : safeString(cause),
    );
    any = true;
  }
  if (any) out.props = props;
  return out;
}

/**
 * Rebuilds an Error from its wire form: name, message, stack and own
 * properties as they were sent. A PreforkError comes back as its own class
 * (its name and code both match); anything else as RemoteTaskError. Never
 * throws, whatever it is given: a job is settled with what this returns.
 */
export function deserializeError(e: SerializedError, depth = 0): Error {
  try {
    return rebuild(e, depth);
  } catch (err) {
    return new catalogue.RemoteTaskError(
      `an error that cannot be rebuilt (${safeString(err)}): ${safeString(e?.message)}`,
    );
  }
}

function rebuild(e: SerializedError, depth: number): Error {
  const props = typeof e.props === 'object' && e.props !== null ? e.props : undefined;
  const message = typeof e.message === 'string' ? e.message : safeString(e.message);
  const cls = typeof e.name === 'string' ? CLASSES.get(e.name) : undefined;
  // Made by Error with the class as new.target: a real Error of that class, without running its constructor.
  const err: Error =
    cls !== undefined && props !== undefined && Object.hasOwn(props, 'code') && props.code === cls.code
      ? Reflect.construct<[string], Error>(Error, [message], cls)
      : new catalogue.RemoteTaskError(message);
  Object.defineProperty(err, 'name', { value: e.name, enumerable: false, writable: true, configurable: true });
  if (typeof e.stack === 'string') err.stack = e.stack;
  if (props !== undefined) {
    for (const [key, value] of Object.entries(props)) {
      if (SKIPPED_PROPS.has(key)) continue;
      defineOwn(
        err,
        key,
        key === 'cause' && isSerializedError(value) && depth < MAX_CAUSE_DEPTH
          ? deserializeError(value, depth + 1)
          : value,
      );
    }
  }
  return err;
}

/** An own data property, whatever the key: `__proto__` stays a key and never reaches a setter. */
function defineOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isSerializedError(v: unknown): v is SerializedError {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as SerializedError).name === 'string' &&
    typeof (v as SerializedError).message === 'string'
  );
}

function isEncodable(value: unknown): boolean {
  if (typeof value === 'function' || typeof value === 'symbol') return false;
  try {
    encodeBody(value);
    return true;
  } catch {
    return false;
  }
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return typeof value;
  }
}
