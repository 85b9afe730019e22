/**
 * Names that come from outside (option names, task names, error names,
 * message types, control commands, units) never index a plain object: an
 * Object.prototype key is an unknown name like any other, never a hit.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Client, defineTasks, OptionError, ProtocolError, RemoteTaskError } from 'prefork';
import { createBroker } from 'prefork/broker';
import { decodeControlRequests } from '../../dist/broker/control-codec.js';
import { parseControl } from '../../dist/cli/commands/control.js';
import { UsageError } from '../../dist/cli/usage-error.js';
import { resolveApplyOptions } from '../../dist/pool/apply-options.js';
import { resolvePoolOptions } from '../../dist/pool/options.js';
import { ResultHandler } from '../../dist/pool/result-handler.js';
import { deserializeError, serializeError } from '../../dist/protocol/error-codec.js';
import { parseDuration, parseSize } from '../../dist/util/units.js';
import { resolveWorkerOptions } from '../../dist/worker-options.js';

const KEYS = ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf'];
const silent = pino({ level: 'silent' });

/** `base` plus an own enumerable `key` (an object literal's `__proto__: x` would set the prototype instead). */
function own(key: string, value: unknown, base: Record<string, unknown> = {}): Record<string, unknown> {
  const out = { ...base };
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

describe.each(KEYS)('the name %s', (key) => {
  it('is an unknown option to the Pool, the Worker, the Client, a broker, apply() and enqueue()', async () => {
    expect(() => resolvePoolOptions(own(key, 1, { app: 'tasks.mjs' }) as never)).toThrow(OptionError);
    expect(() => resolveWorkerOptions(own(key, 1, { app: 'tasks.mjs' }) as never)).toThrow(OptionError);
    expect(() => resolveApplyOptions(own(key, 1))).toThrow(OptionError);
    expect(() => new Client(own(key, 1, { broker: `memory://prototype-keys-${key}`, logger: silent }))).toThrow(
      OptionError,
    );
    expect(() => createBroker(`memory://prototype-keys-${key}`, own(key, 1, { logger: silent }))).toThrow(OptionError);
    const client = new Client({ broker: `memory://prototype-keys-${key}`, logger: silent });
    try {
      await expect(client.enqueue('echo', [], own(key, 1) as never)).rejects.toThrow(OptionError);
    } finally {
      await client.close();
    }
  });

  it('is an unknown task option, an unknown backoff option, and a fine task name', () => {
    expect(() => defineTasks({ t: own(key, 1, { run: () => 1 }) } as never)).toThrow(OptionError);
    expect(() => defineTasks({ t: { run: () => 1, backoff: own(key, 1) } } as never)).toThrow(OptionError);
    const registry = defineTasks(own(key, { run: () => 1, retries: 2 }) as never);
    expect([...registry.tasks.keys()]).toEqual([key]);
    expect(registry.options.get(key)).toEqual({ retries: 2 });
    expect(defineTasks({ t: () => 1 }).options.get(key)).toBeUndefined();
  });

  it('as an error name comes back as a RemoteTaskError with that name, its properties intact', () => {
    const err = Object.assign(new Error(`threw ${key}`), { name: key, detail: 1 });
    Object.defineProperty(err, key, { value: 'own', enumerable: true });
    const back = deserializeError(serializeError(err)) as RemoteTaskError;
    expect(back).toBeInstanceOf(RemoteTaskError);
    expect(back.name).toBe(key);
    expect(back.message).toBe(`threw ${key}`);
    expect(back.detail).toBe(1);
    expect(Object.getOwnPropertyDescriptor(back, key)?.value).toBe('own');
    expect(Object.getPrototypeOf(back)).toBe(RemoteTaskError.prototype);
  });

  it('as an error name never makes the rebuilding throw, whatever else is sent', () => {
    expect(deserializeError({ name: key, message: 'm', props: own('code', 'PREFORK_RETRY') }).name).toBe(key);
    expect(deserializeError({ name: key, message: 'm', props: 'garbage' } as never)).toBeInstanceOf(Error);
  });

  it('is not a message type, nor a control command, nor a unit', () => {
    const handler = new ResultHandler({} as never);
    expect(() => handler.handle({ pid: 1 } as never, [key] as never)).toThrow(ProtocolError);
    const raw = JSON.stringify({ id: 'r1', command: key, args: [] });
    expect(decodeControlRequests([raw], silent)).toEqual([]);
    expect(() => parseControl(key, [])).toThrow(UsageError);
    expect(parseSize(`1${key}`)).toBeUndefined();
    expect(parseDuration(`1${key}`)).toBeUndefined();
  });
});
