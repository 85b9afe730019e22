import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ArgumentsTooLargeError, ResultSerializationError, messageOf } from '../../errors.js';
import { serializeError } from '../../protocol/error-codec.js';
import type { SerializedError } from '../../job-types.js';

/** Redis's default proto-max-bulk-len: the largest value (one argument) it takes, when it will not say. */
export const DEFAULT_VALUE_MAX = 512 * 1024 * 1024;

/**
 * The largest value Redis takes in one argument (proto-max-bulk-len, 1 MB
 * at the least). A result or workflow outcome over it would be refused
 * after the settlement script has acked its job, losing the outcome; it is
 * replaced by an error that says so (oversize()) before it is sent.
 */
export class ValueLimit {
  bytes = DEFAULT_VALUE_MAX;

  /** Reads proto-max-bulk-len once the connection is up (and after each reconnect); a Redis that refuses CONFIG keeps the default. */
  async read(redis: Redis, log: Logger): Promise<void> {
    try {
      const reply: unknown = await redis.config('GET', 'proto-max-bulk-len');
      const value = Array.isArray(reply) ? Number(reply[1]) : NaN;
      if (Number.isSafeInteger(value) && value > 0) this.bytes = value;
    } catch (err) {
      log.debug({ err: messageOf(err) }, 'could not read proto-max-bulk-len (CONFIG GET); taking 512 MB');
    }
  }

  /**
   * Refuses a job of `task` whose value (`bytes`: its entry's values packed)
   * Redis would not take: sent, Redis drops the connection, failing every
   * command on it (the rest of the enqueue unanswered, and other callers').
   */
  checkJob(task: string, bytes: number): void {
    if (bytes > this.bytes) throw new ArgumentsTooLargeError(task, bytes, this.bytes, 'proto-max-bulk-len');
  }

  /** The error that stands for a task's value of `size` bytes that Redis would refuse, or undefined when it fits. */
  oversize(task: string, size: number): SerializedError | undefined {
    if (size <= this.bytes) return undefined;
    return serializeError(
      new ResultSerializationError(
        task,
        `it is ${size} bytes of msgpack, and Redis takes values of at most ${this.bytes} bytes (proto-max-bulk-len)`,
      ),
    );
  }
}
