import { describe, expect, it } from 'vitest';
import {
  JobWithdrawnError,
  PoolClosedError,
  PoolFailedError,
  ProtocolError,
  RemoteTaskError,
  TimeLimitExceeded,
} from 'prefork';
import { Fifo } from '../../../dist/util/fifo.js';
import { ResultHandler } from '../../../dist/pool/result-handler.js';
import { serializeError } from '../../../dist/protocol/error-codec.js';
import { MessageType } from '../../../dist/protocol/messages.js';

/** A ResultHandler and a child holding one job (seq 1), with what got settled. */
function holdingOneJob() {
  const settled: { ok: boolean; outcome: unknown }[] = [];
  const handler = new ResultHandler({
    onSettled: (_proc: unknown, _job: unknown, ok: boolean, outcome: unknown) => settled.push({ ok, outcome }),
  } as never);
  const proc = { pid: 7, inFlight: new Fifo<{ seq: number; startedAt: number }>() };
  proc.inFlight.push({ seq: 1, startedAt: 0 });
  const resultError = (err: unknown, seq = 1): void =>
    handler.handle(proc as never, [MessageType.RESULT_ERROR, seq, serializeError(err)] as never);
  return { proc, settled, resultError };
}

describe('ResultHandler: RESULT_ERROR', () => {
  it.each([
    ['JobWithdrawnError', () => new JobWithdrawnError()],
    ['PoolClosedError', () => new PoolClosedError()],
    ['PoolFailedError', () => new PoolFailedError('a pool inside the task failed')],
  ])(
    'a task that throws %s failed: the error is the task’s, not the pool’s signal to give the job back',
    (name, make) => {
      const { settled, resultError } = holdingOneJob();
      const thrown = make();
      resultError(thrown);
      expect(settled).toHaveLength(1);
      const outcome = settled[0]!.outcome as RemoteTaskError;
      expect(outcome).toBeInstanceOf(RemoteTaskError);
      expect(outcome).toMatchObject({ name, message: thrown.message, code: thrown.code });
    },
  );

  it('other prefork errors a task throws keep their class', () => {
    const { settled, resultError } = holdingOneJob();
    resultError(new TimeLimitExceeded(100, 'inner'));
    expect(settled[0]!.outcome).toBeInstanceOf(TimeLimitExceeded);
  });

  it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf'])(
    'settles the job it takes when the error is named %s',
    (name) => {
      const { proc, settled, resultError } = holdingOneJob();
      resultError(Object.assign(new Error('boom'), { name }));
      expect(settled).toHaveLength(1);
      expect(settled[0]).toMatchObject({ ok: false, outcome: { name, message: 'boom' } });
      expect(proc.inFlight.length).toBe(0);
    },
  );

  it('a result for a job the child does not hold is a protocol error that takes nothing off the in-flight list', () => {
    const { proc, settled, resultError } = holdingOneJob();
    expect(() => resultError(new Error('boom'), 2)).toThrow(ProtocolError);
    expect(settled).toHaveLength(0);
    expect(proc.inFlight.length).toBe(1);
  });
});

describe('ResultHandler: a job’s start', () => {
  /** A handler whose child holds jobs 1 and 2, recording starts and settlements in order. */
  function holdingTwoJobs() {
    const events: string[] = [];
    const handler = new ResultHandler({
      onStarted: (_proc: unknown, job: { seq: number }) => events.push(`started ${job.seq}`),
      onSettled: (_proc: unknown, job: { seq: number }) => events.push(`settled ${job.seq}`),
    } as never);
    const job1 = { seq: 1, startedAt: 0, announced: false, acked: false };
    const job2 = { seq: 2, startedAt: 0, announced: false, acked: false };
    const proc = { pid: 7, lastSettledSeq: 0, inFlight: new Fifo<typeof job1>() };
    proc.inFlight.push(job1);
    proc.inFlight.push(job2);
    const send = (...msg: unknown[]): void => handler.handle(proc as never, msg as never);
    return { proc, job1, job2, events, send };
  }

  it('a RESULT with no ACK before it settles the job and gives it the start time it carries', () => {
    const { job1, events, send } = holdingTwoJobs();
    send(MessageType.RESULT_OK, 1, 'value', null, 1_700_000_000_123);
    expect(events).toEqual(['settled 1']);
    expect(job1.startedAt).toBe(1_700_000_000_123);
  });

  it('an ACK after its RESULT is ignored; the next job’s ACK still counts', () => {
    const { proc, job2, events, send } = holdingTwoJobs();
    send(MessageType.RESULT_OK, 1, 'value', null, 1_700_000_000_123);
    send(MessageType.ACK, 1, 1_700_000_000_123);
    expect(events).toEqual(['settled 1']);
    expect(proc.inFlight.length).toBe(1);
    send(MessageType.ACK, 2, 1_700_000_000_200);
    expect(events).toEqual(['settled 1', 'started 2']);
    expect(job2.startedAt).toBe(1_700_000_000_200);
  });

  it('an ACK for a job the child never held, or a second ACK, is still a protocol error', () => {
    const { send } = holdingTwoJobs();
    expect(() => send(MessageType.ACK, 9)).toThrow(ProtocolError);
    send(MessageType.ACK, 1);
    expect(() => send(MessageType.ACK, 1)).toThrow(ProtocolError);
  });
});
