import {
  PayloadDecodeError,
  RemoteTaskError,
  ResultSerializationError,
  Retry,
  SoftTimeLimitExceeded,
  UnknownTaskError,
} from '../errors.js';
import type { SerializedError } from '../job-types.js';
import { encodeBody } from './codec.js';

const SKIPPED_PROPS = new Set(['name', 'message', 'stack']);

/** Turns anything a task threw into the wire form; own properties that msgpack cannot carry are dropped. */
export function serializeError(err: unknown): SerializedError {
  if (!(err instanceof Error)) {
    return { name: 'Error', message: `non-error thrown: ${safeString(err)}` };
  }
  const out: SerializedError = { name: err.name, message: err.message };
  if (err.stack !== undefined) out.stack = err.stack;
  const props: Record<string, unknown> = {};
  let any = false;
  for (const key of Object.keys(err)) {
    if (SKIPPED_PROPS.has(key)) continue;
    const value = (err as unknown as Record<string, unknown>)[key];
    if (!isEncodable(value)) continue;
    props[key] = value;
    any = true;
  }
  if (err.cause !== undefined && !('cause' in props)) {
    props.cause =
      err.cause instanceof Error
        ? serializeError(err.cause)
        : isEncodable(err.cause)
          ? err.cause
          : safeString(err.cause);
    any = true;
  }
  if (any) out.props = props;
  return out;
}

type ErrorFactory = (e: SerializedError) => Error;

/** The task name a serialized prefork error carries, or '?'. */
function taskOf(e: SerializedError): string {
  const task = e.props?.task;
  return typeof task === 'string' ? task : '?';
}

/** prefork's own errors come back as their own classes so `instanceof` works in the parent. */
const KNOWN: Record<string, ErrorFactory> = {
  SoftTimeLimitExceeded: (e) => new SoftTimeLimitExceeded(e.message),
  UnknownTaskError: (e) => new UnknownTaskError(taskOf(e)),
  ResultSerializationError: (e) => new ResultSerializationError(taskOf(e), e.message),
  PayloadDecodeError: (e) => new PayloadDecodeError(taskOf(e), e.message),
  Retry: (e) =>
    new Retry({ delay: typeof e.props?.delay === 'number' ? e.props.delay : undefined, message: e.message }),
};

/** Rebuilds an Error in the parent: name, message, stack and own properties as the child sent them. */
export function deserializeError(e: SerializedError): Error {
  const factory = KNOWN[e.name];
  const err: Error = factory ? factory(e) : new RemoteTaskError(e.message);
  Object.defineProperty(err, 'name', { value: e.name, enumerable: false, writable: true, configurable: true });
  err.message = e.message;
  if (e.stack !== undefined) err.stack = e.stack;
  if (e.props) {
    for (const [key, value] of Object.entries(e.props)) {
      (err as unknown as Record<string, unknown>)[key] =
        key === 'cause' && isSerializedError(value) ? deserializeError(value) : value;
    }
  }
  return err;
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
