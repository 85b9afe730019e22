import { describe, expect, it } from 'vitest';
import type { Delivery } from '../../../dist/broker/types.js';
import { MAX_DELAY_MS } from '../../../dist/util/units.js';
import { deserializeError } from '../../../dist/protocol/error-codec.js';
import type { SerializedError } from '../../../dist/job-types.js';
import {
  DEFAULT_RETRY_BUDGET,
  malformedSettlement,
  settlementFor,
  type Attempt,
} from '../../../dist/consumer/outcome.js';
import {
  JobWithdrawnError,
  MaxRetriesExceededError,
  PayloadDecodeError,
  PoolClosedError,
  PoolFailedError,
  ResultSerializationError,
  Retry,
  TimeLimitExceeded,
  UnknownTaskError,
  WorkerLostError,
} from '../../../dist/errors.js';

function delivery(attempt = 0, options: Delivery['job']['options'] = {}): Delivery {
  return {
    receipt: 'r1',
    queue: 'default',
    job: {
      id: 'j1',
      task: 'resize',
      queue: 'default',
      payload: new Uint8Array([0x90]),
      attempt,
      redeliveries: 0,
      options,
      enqueuedAt: 1,
    },
  };
}
const at: Attempt = { node: 'n1', pid: 42, startedAt: 100, finishedAt: 150, task: undefined };
const noJitter = (): number => 1;

describe('settlementFor', () => {
  it('success → ack with a SUCCESS record (value, node, pid, runtime)', () => {
    const s = settlementFor(delivery(), true, 7, at);
    expect(s.kind).toBe('ack');
    expect(s.kind === 'ack' && s.result).toMatchObject({
      id: 'j1',
      state: 'SUCCESS',
      value: 7,
      node: 'n1',
      pid: 42,
      runtime: 50,
      retries: 0,
    });
  });

  it('ignoreResult → ack without a record', () => {
    const s = settlementFor(delivery(0, { ignoreResult: true }), true, 7, at);
    expect(s).toEqual({ kind: 'ack', delivery: delivery(0, { ignoreResult: true }), result: undefined });
  });

  describe("a task defined with ignoreResult (the job's own option unset)", () => {
    const quiet: Attempt = { ...at, task: { ignoreResult: true, retries: 1 } };
    const waited = (attempt = 0, options: Delivery['job']['options'] = {}): Delivery => {
      const d = delivery(attempt, options);
      return { ...d, job: { ...d.job, replyTo: 'client-1' } };
    };

    it('a client may wait (replyTo): the final state alone, marked ignoreResult, without value or error', () => {
      const ok = settlementFor(waited(), true, 7, quiet);
      expect(ok.kind === 'ack' && ok.result).toMatchObject({ id: 'j1', state: 'SUCCESS', ignoreResult: true });
      expect(ok.kind === 'ack' && ok.result).not.toHaveProperty('value');
      const dead = settlementFor(waited(1), false, new Error('boom'), quiet);
      expect(dead.kind === 'dead' && dead.result).toMatchObject({ state: 'FAILURE', ignoreResult: true });
      expect(dead.kind === 'dead' && dead.result).not.toHaveProperty('error');
    });

    it('a retry writes no record (not final: it tells a waiter nothing)', () => {
      const s = settlementFor(waited(0), false, new Error('boom'), quiet);
      expect(s).toMatchObject({ kind: 'retry', result: undefined });
    });

    it('no client to tell (no replyTo): no record', () => {
      expect(settlementFor(delivery(), true, 7, quiet)).toMatchObject({ kind: 'ack', result: undefined });
    });

    it("the job's own ignoreResult wins: false keeps the value, true keeps nothing", () => {
      const kept = settlementFor(waited(0, { ignoreResult: false }), true, 7, quiet);
      expect(kept.kind === 'ack' && kept.result).toMatchObject({ state: 'SUCCESS', value: 7 });
      expect(kept.kind === 'ack' && kept.result).not.toHaveProperty('ignoreResult');
      expect(settlementFor(waited(0, { ignoreResult: true }), true, 7, quiet)).toMatchObject({ result: undefined });
    });
  });

  it.each([
    ['JobWithdrawnError', new JobWithdrawnError()],
    ['PoolClosedError', new PoolClosedError()],
    ['PoolFailedError (the job is not at fault)', new PoolFailedError('pool failed: children keep dying')],
  ])('%s → given back, unstarted', (_, err) => {
    expect(settlementFor(delivery(), false, err, at).kind).toBe('giveBack');
  });

  it.each([
    ['unknown task', new UnknownTaskError('resize')],
    ['undecodable payload', new PayloadDecodeError('resize', 'bad')],
    ['unserializable result', new ResultSerializationError('resize', 'a function')],
  ])('%s → dead at once, even with retries left', (_, err) => {
    const s = settlementFor(delivery(0, { retries: 5 }), false, err, at);
    expect(s.kind).toBe('dead');
    expect(s.kind === 'dead' && s.result?.state).toBe('FAILURE');
  });

  it.each([
    ['a task error', new Error('boom')],
    ['a lost worker', new WorkerLostError(1, null, 'SIGKILL')],
    ['a hard time limit', new TimeLimitExceeded(100, 'resize')],
  ])('%s with retries left → retry with backoff, RETRY record', (_, err) => {
    const s = settlementFor(
      delivery(1, { retries: 3, backoff: { delay: 100, jitter: false } }),
      false,
      err,
      at,
      noJitter,
    );
    expect(s).toMatchObject({ kind: 'retry', delay: 200 });
    expect(s.kind === 'retry' && s.result?.state).toBe('RETRY');
  });

  it('a failure with retries spent → dead, FAILURE record naming the retries', () => {
    const s = settlementFor(delivery(3, { retries: 3 }), false, new Error('boom'), at);
    expect(s.kind).toBe('dead');
    expect(s.kind === 'dead' && s.reason).toMatch(/retries spent \(3\): boom/);
  });

  it('no retries configured → dead on the first failure', () => {
    expect(settlementFor(delivery(), false, new Error('boom'), at).kind).toBe('dead');
  });

  it("the task's own retries apply when the job sets none; the job's win", () => {
    const task = { retries: 2, backoff: { type: 'fixed' as const, delay: 5, jitter: false } };
    expect(settlementFor(delivery(1), false, new Error('x'), { ...at, task })).toMatchObject({
      kind: 'retry',
      delay: 5,
    });
    expect(settlementFor(delivery(1, { retries: 1 }), false, new Error('x'), { ...at, task }).kind).toBe('dead');
  });

  it('Retry with a delay is honoured; without configured retries it has the default budget', () => {
    expect(settlementFor(delivery(0), false, new Retry({ delay: 1234 }), at)).toMatchObject({
      kind: 'retry',
      delay: 1234,
    });
    expect(settlementFor(delivery(DEFAULT_RETRY_BUDGET), false, new Retry({ delay: 1 }), at).kind).toBe('dead');
  });

  it("a Retry with its retries spent fails as MaxRetriesExceededError (Celery's), the Retry its cause", () => {
    const s = settlementFor(delivery(2, { retries: 2 }), false, new Retry({ message: 'not ready yet' }), at);
    expect(s).toMatchObject({ kind: 'dead', reason: 'retries spent (2): not ready yet' });
    const error = s.kind === 'dead' ? s.result?.error : undefined;
    expect(error).toMatchObject({ name: 'MaxRetriesExceededError', message: 'retries spent (2): not ready yet' });
    const revived = deserializeError(error as SerializedError);
    expect(revived).toBeInstanceOf(MaxRetriesExceededError);
    expect(revived).toMatchObject({ code: 'PREFORK_MAX_RETRIES_EXCEEDED' });
    expect(revived.cause).toBeInstanceOf(Retry);
    expect(revived.cause).toMatchObject({ message: 'not ready yet' });
    // Any other error spent its retries as itself.
    const other = settlementFor(delivery(2, { retries: 2 }), false, new Error('boom'), at);
    expect(other.kind === 'dead' ? other.result?.error : undefined).toMatchObject({ name: 'Error', message: 'boom' });
  });

  it('a Retry delay below 0 waits 0; Infinity or a huge one is clamped to the maximum (100 years, as for enqueue delay): the due time stays finite', () => {
    expect(MAX_DELAY_MS).toBe(100 * 365.25 * 24 * 3_600_000);
    expect(settlementFor(delivery(0), false, new Retry({ delay: -5 }), at)).toMatchObject({ kind: 'retry', delay: 0 });
    expect(settlementFor(delivery(0), false, new Retry({ delay: Infinity }), at)).toMatchObject({
      kind: 'retry',
      delay: MAX_DELAY_MS,
    });
    expect(settlementFor(delivery(0), false, new Retry({ delay: 1e300 }), at)).toMatchObject({
      kind: 'retry',
      delay: MAX_DELAY_MS,
    });
    expect(settlementFor(delivery(0), false, new Retry({ delay: 12.6 }), at)).toMatchObject({
      kind: 'retry',
      delay: 13,
    });
  });

  it.each([
    ['NaN', NaN],
    ['a string', '5s' as unknown as number],
  ])('a Retry delay that is %s cannot be scheduled: dead, FAILURE naming Retry.delay', (_, delay) => {
    const s = settlementFor(delivery(0), false, new Retry({ delay }), at);
    expect(s.kind).toBe('dead');
    expect(s.kind === 'dead' && s.reason).toMatch(/retry cannot be scheduled: invalid option Retry\.delay/);
    expect(s.kind === 'dead' && s.result?.error?.name).toBe('OptionError');
  });

  it.each([
    ['a NaN delay', { delay: NaN }],
    ['a negative cap', { cap: -1 }],
    ['an unknown type', { type: 'linear' }],
  ])("a job's backoff with %s cannot be scheduled: dead, FAILURE naming the field", (_, backoff) => {
    const s = settlementFor(delivery(0, { retries: 3, backoff: backoff as never }), false, new Error('boom'), at);
    expect(s.kind).toBe('dead');
    expect(s.kind === 'dead' && s.reason).toMatch(/invalid option backoff\.(delay|cap|type)/);
  });

  it('a backoff cap up to 100 years, as enqueue and defineTasks accept it, is honoured, not cut shorter', () => {
    const backoff = { type: 'fixed' as const, delay: MAX_DELAY_MS, cap: MAX_DELAY_MS, jitter: false };
    expect(settlementFor(delivery(0, { retries: 1, backoff }), false, new Error('boom'), at)).toMatchObject({
      kind: 'retry',
      delay: MAX_DELAY_MS,
    });
  });

  it("a job's backoff beyond 100 years is refused as at enqueue: dead, FAILURE naming the field", () => {
    const s = settlementFor(
      delivery(0, { retries: 1, backoff: { cap: MAX_DELAY_MS + 1 } }),
      false,
      new Error('boom'),
      at,
    );
    expect(s.kind).toBe('dead');
    expect(s.kind === 'dead' && s.reason).toMatch(
      /invalid option backoff\.cap: 3155760000001 \(expected a duration >= 0 up to 100 years/,
    );
  });

  it('a malformed delivery → dead with a FAILURE record saying why', () => {
    const d = { ...delivery(), malformed: 'missing field task' };
    const s = malformedSettlement(d, 'n1');
    expect(s.kind).toBe('dead');
    expect(s.kind === 'dead' && s.reason).toMatch(/missing field task/);
    expect(s.kind === 'dead' && s.result?.error?.name).toBe('MalformedJobError');
  });
});
