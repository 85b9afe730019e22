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

/**
 * Turns anything a task threw into the wire form; own properties that
 * msgpack cannot carry, or whose getters throw, are dropped. Never throws:
 * a value whose name, message or prototype cannot be read (a getter or a
 * Proxy trap that throws) is replaced by an ErrorSerializationError saying
 * why; `task` names the task that threw it, when known.
 */
export function serializeError(err: unknown, task?: string): SerializedError {
  return serializeAt(err, task, 0);
}

function serializeAt(err: unknown, task: string | undefined, depth: number): SerializedError {
  try {
    return readError(err, task, depth);
  } catch (readErr) {
    if (!(readErr instanceof UnreadablePart)) throw readErr;
    // Made here, by prefork: every part of it reads.
    return readError(new catalogue.ErrorSerializationError(task, readErr.message), task, depth);
  }
}

/** A part of a thrown value whose read threw: the value cannot be described, and this says why. */
class UnreadablePart extends Error {}

/** Reads `part` of what was thrown; a read that throws becomes an UnreadablePart naming it. */
function readPart<T>(part: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new UnreadablePart(`reading its ${part} threw: ${catalogue.whyUnreadable(err)}`);
  }
}

function readError(err: unknown, task: string | undefined, depth: number): SerializedError {
  if (!readPart('prototype', () => err instanceof Error)) {
    return { name: 'Error', message: `non-error thrown: ${readPart('string form', () => String(err))}` };
  }
  const e = err as Error;
  const name: unknown = readPart('name', () => e.name);
  const message: unknown = readPart('message', () => e.message);
  const out: SerializedError = {
    name: typeof name === 'string' ? name : 'Error',
    message: typeof message === 'string' ? message : safeString(message),
  };
  // The stack and the rest only add detail: one that cannot be read is left out.
  const stack = tryRead(() => e.stack);
  if (typeof stack === 'string') out.stack = stack;
  const props: Record<string, unknown> = {};
  let any = false;
  for (const key of tryRead(() => Object.keys(e)) ?? []) {
    if (SKIPPED_PROPS.has(key)) continue;
    let value: unknown;
    try {
      value = (e as unknown as Record<string, unknown>)[key];
    } catch {
      continue;
    }
    if (!isEncodable(value)) continue;
    defineOwn(props, key, value);
    any = true;
  }
  let cause: unknown;
  let causeRead = true;
  try {
    cause = e.cause;
  } catch (readErr) {
    cause = `the cause cannot be read: reading it threw: ${catalogue.whyUnreadable(readErr)}`;
    causeRead = false;
  }
  if (cause !== undefined && !Object.hasOwn(props, 'cause')) {
    defineOwn(props, 'cause', causeRead ? causeForm(cause, task, depth) : cause);
    any = true;
  }
  if (any) out.props = props;
  return out;
}

/** A cause as it travels: an error in wire form (up to MAX_CAUSE_DEPTH), else the value, or its string form. */
function causeForm(cause: unknown, task: string | undefined, depth: number): unknown {
  if (!(tryRead(() => cause instanceof Error) ?? true)) return isEncodable(cause) ? cause : safeString(cause);
  return depth < MAX_CAUSE_DEPTH
    ? serializeAt(cause, task, depth + 1)
    : { name: 'Error', message: 'cause chain too deep' };
}

/** `read()`, or undefined when it throws. */
function tryRead<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
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
