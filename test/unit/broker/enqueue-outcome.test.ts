/**
 * What an enqueue's pipeline replies mean. Each command that adds jobs
 * counts on its own: answered, its jobs are enqueued; refused by Redis,
 * they are not; timed out, nobody knows (Redis runs what it received if it
 * resumes). The replies here are as ioredis gives them: [error, value].
 */
import { describe, expect, it } from 'vitest';
import { BrokerOfflineError, BrokerTimeoutError, BrokerUnavailableError, EnqueueIncompleteError } from 'prefork';
import { enqueueFailure } from '../../../dist/broker/redis/enqueue-outcome.js';

type Reply = [Error | null, unknown];
const ok: Reply = [null, 1];
const refused = (): Reply => [new Error('OOM command not allowed when used memory > maxmemory'), null];
const timedOut = (what: string): Reply => [new BrokerTimeoutError('redis://r:6379', what, 300), null];

/** The pipeline: the queues' listing (no jobs), then one command per batch of jobs. */
const adds = new Map<number, string[]>([
  [1, ['a1', 'a2']],
  [2, ['b1']],
  [3, ['c1', 'c2']],
]);

describe('the outcome of an enqueue pipeline', () => {
  it('every reply answered: nothing went wrong', () => {
    expect(enqueueFailure([ok, ok, ok, ok], adds)).toBeUndefined();
  });

  it('batches confirmed, then no answer for the rest: those confirmed are enqueued, the rest unconfirmed, none refused', () => {
    const failure = enqueueFailure(
      [ok, ok, timedOut('the script enqueueJobs'), timedOut('the script enqueueJobs')],
      adds,
    );
    expect(failure?.kind).toBe('failed');
    const err = failure?.err as EnqueueIncompleteError;
    expect(err).toBeInstanceOf(EnqueueIncompleteError);
    expect([err.enqueued, err.notEnqueued, err.unconfirmed]).toEqual([['a1', 'a2'], [], ['b1', 'c1', 'c2']]);
    expect(err.cause).toBeInstanceOf(BrokerTimeoutError);
    expect(err.message).toMatch(
      /^2 of 5 jobs were enqueued, then the broker did not answer for 3: they may or may not be enqueued \(their ids: err\.unconfirmed\): the broker at .* may or may not have been applied$/,
    );
  });

  it('a refusal, then no answer: refused ones are not enqueued, unanswered ones unconfirmed; Redis refusal is the cause', () => {
    const failure = enqueueFailure([ok, ok, refused(), timedOut('the script enqueueJobs')], adds);
    const err = failure?.err as EnqueueIncompleteError;
    expect([err.enqueued, err.notEnqueued, err.unconfirmed]).toEqual([['a1', 'a2'], ['b1'], ['c1', 'c2']]);
    expect(err.message).toContain('did not answer for 2: they may or may not be enqueued');
    expect(err.message).toContain('and refused 1 (their ids: err.notEnqueued): OOM');
  });

  it('nothing confirmed: the timeout as it came, named by the first command that adds jobs', () => {
    const listing = timedOut('the command SADD');
    const batch = timedOut('the script enqueueJobs');
    const failure = enqueueFailure([listing, batch, timedOut('the script enqueueJobs'), refused()], adds);
    expect(failure).toEqual({ kind: 'failed', err: batch[0] });
  });

  it('a refusal, then the connection closed before the rest were answered: those are unconfirmed, not refused', () => {
    const closed: Reply = [
      new BrokerUnavailableError(
        'redis://r:6379',
        'the connection closed before Redis answered: what was sent may or may not have been applied',
      ),
      null,
    ];
    const err = enqueueFailure([ok, ok, refused(), closed], adds)?.err as EnqueueIncompleteError;
    expect([err.enqueued, err.notEnqueued, err.unconfirmed]).toEqual([['a1', 'a2'], ['b1'], ['c1', 'c2']]);
  });

  it('never sent (the connection was down): not enqueued, as a refusal is; no answer was owed, so none is unconfirmed', () => {
    const offline = (): Reply => [new BrokerOfflineError('redis://r:6379', 'the connection is down'), null];
    const err = enqueueFailure([ok, ok, offline(), offline()], adds)?.err as EnqueueIncompleteError;
    expect([err.enqueued, err.notEnqueued, err.unconfirmed]).toEqual([['a1', 'a2'], ['b1', 'c1', 'c2'], []]);
    expect(err.cause).toBeInstanceOf(BrokerOfflineError);
    const none = offline();
    expect(enqueueFailure([none, offline(), offline(), offline()], adds)).toEqual({ kind: 'failed', err: none[0] });
  });

  it('only refusals: as before, EnqueueIncompleteError with the refused ones, or the refusal when none landed', () => {
    const partial = enqueueFailure([ok, ok, refused(), refused()], adds);
    const err = partial?.err as EnqueueIncompleteError;
    expect([err.enqueued, err.notEnqueued, err.unconfirmed]).toEqual([['a1', 'a2'], ['b1', 'c1', 'c2'], []]);
    expect(err.message).toMatch(
      /^2 of 5 jobs were enqueued, then the broker refused the rest \(their ids: err\.notEnqueued\): OOM/,
    );
    const none = refused();
    expect(enqueueFailure([ok, none, refused(), refused()], adds)).toEqual({ kind: 'failed', err: none[0] });
  });

  it("only the queues' listing failed: every job landed, which is no failure of the enqueue", () => {
    const listing = timedOut('the command SADD');
    expect(enqueueFailure([listing, ok, ok, ok], adds)).toEqual({ kind: 'unlisted', err: listing[0] });
  });
});
