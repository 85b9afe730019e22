/**
 * An error a job fails with comes back to the Client as its own class, after
 * the trip child → parent (the pipe) → Redis → Client: `instanceof` works on
 * the producer's side, with the error's own fields.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  PreforkError,
  RemoteTaskError,
  ResultSerializationError,
  TimeLimitExceeded,
  UnknownTaskError,
  WorkerLostError,
} from 'prefork';
import { cleanup, makeClient, makeWorker, uniqueName } from '../helpers/worker.js';

afterEach(cleanup);

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('the job succeeded');
    },
    (err: unknown) => err as Error,
  );
}

describe('errors through a Worker on Redis keep their class on the Client', () => {
  it('TimeLimitExceeded, WorkerLostError, UnknownTaskError, ResultSerializationError; a task’s own error is a RemoteTaskError', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    await makeWorker({ broker: url, namespace, concurrency: 2 }).start();
    const client = makeClient(url, namespace);

    const [limit, lost, unknown, unserializable, own] = await Promise.all([
      client.enqueue('slowWithLimit'),
      client.enqueue('crash'),
      client.enqueue('nope'),
      client.enqueue('returnsFunction'),
      client.enqueue('flaky', [uniqueName('key'), 2]),
    ]);

    const timeLimit = await failureOf(limit.result());
    expect(timeLimit).toBeInstanceOf(TimeLimitExceeded);
    expect(timeLimit).toMatchObject({ code: 'PREFORK_TIME_LIMIT', limitMs: 200 });

    const workerLost = await failureOf(lost.result());
    expect(workerLost).toBeInstanceOf(WorkerLostError);
    expect(workerLost).toMatchObject({ code: 'PREFORK_WORKER_LOST', signal: 'SIGKILL', exitCode: null });

    const unknownTask = await failureOf(unknown.result());
    expect(unknownTask).toBeInstanceOf(UnknownTaskError);
    expect(unknownTask).toMatchObject({ task: 'nope' });

    expect(await failureOf(unserializable.result())).toBeInstanceOf(ResultSerializationError);

    const taskError = await failureOf(own.result());
    expect(taskError).toBeInstanceOf(RemoteTaskError);
    expect(taskError).not.toBeInstanceOf(PreforkError);
    expect(taskError.message).toBe('flaky attempt 1');
  });
});
