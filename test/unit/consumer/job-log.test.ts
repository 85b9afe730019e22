/**
 * The job log's failure lines, with a real pino logger writing to a string:
 * an error's fields and its causes are bounded as its message is, whatever
 * shape the cause has.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { JobLog } from '../../../dist/consumer/job-log.js';
import type { Settlement } from '../../../dist/broker/types.js';

/** The `err` of the line a dead settlement of `err` logs, results stored or not. */
function loggedError(err: Error, stored: boolean): Record<string, unknown> & { cause?: unknown } {
  let out = '';
  const log = pino({ serializers: { err: pino.stdSerializers.errWithCause } }, { write: (s: string) => (out += s) });
  const delivery = { job: { id: 'j1', task: 't', attempt: 0, options: {} }, queue: 'q' };
  const settlement = { kind: 'dead', delivery, reason: err.message, result: stored ? { error: {} } : undefined };
  new JobLog(log, 'info').settled(settlement as unknown as Settlement, err, { pid: 1, startedAt: 1, finishedAt: 2 });
  expect(out.length).toBeLessThan(40_000);
  return (JSON.parse(out) as { err: Record<string, unknown> }).err;
}

describe('JobLog failure lines', () => {
  it('a cause that is no error is a field like the others: cut past the bound, saying where it is whole', () => {
    const err = Object.assign(new Error('top'), { cause: 'c'.repeat(100_000) });
    expect(loggedError(err, true).cause).toBe(
      "[field cut: 100005 bytes; whole in the job's result: prefork result j1]",
    );
    expect(loggedError(err, false).cause).toBe('[field cut: 100005 bytes]');
  });

  it('a chain of causes is shown 8 deep, each cut as the error is, then marked', () => {
    let err = new Error('c'.repeat(5_000));
    for (let i = 0; i < 10; i++) err = new Error(`level ${i}`, { cause: err });
    let cause = loggedError(err, true).cause as { message: string; cause?: unknown };
    for (let depth = 1; depth < 8; depth++) cause = cause.cause as { message: string; cause?: unknown };
    expect(cause.message).toBe('level 1');
    expect(cause.cause).toBe("[cause cut: deeper than 8 causes; whole in the job's result: prefork result j1]");
  });
});
