import { pack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodeEvents, encodeEvents } from '../../../dist/broker/event-codec.js';
import { batchEvents, type EventBatch } from '../../../dist/events/event-batch.js';

const batch: EventBatch = {
  node: 'node-a',
  items: [
    [0, 1_000, 'j1', 'resize', 'images', 0, undefined, undefined],
    [1, 1_002, 'j1', 'resize', 'images', undefined, 4242, undefined],
    { type: 'job-progress', at: 1_003, node: 'node-a', jobId: 'j1', task: 'resize', queue: 'images', progress: 50 },
    [2, 1_010, 'j1', 'resize', 'images', 0, 4242, 8],
    [0, 1_011, 'j2', '__proto__', 'constructor', 2, undefined, undefined],
    [2, 1_012, 'j2', '__proto__', 'constructor', 2, undefined, undefined],
    { type: 'process-down', at: 1_020, node: 'node-a', pid: 4242, exitCode: null, signal: 'SIGKILL', reason: 'died' },
  ],
};

describe('the events entry codec', () => {
  it('reads back every event of a batch, steps and others, in order and whole', () => {
    const { events, skipped } = decodeEvents(encodeEvents(batch));
    expect(skipped).toBe(0);
    expect(events).toEqual(batchEvents(batch));
    expect(events.map((e) => e.type)).toEqual([
      'job-received',
      'job-started',
      'job-progress',
      'job-succeeded',
      'job-received',
      'job-succeeded',
      'process-down',
    ]);
    expect(events[3]).toEqual({
      type: 'job-succeeded',
      at: 1_010,
      node: 'node-a',
      jobId: 'j1',
      task: 'resize',
      queue: 'images',
      attempt: 0,
      pid: 4242,
      runtimeMs: 8,
    });
    // A job that never started here (a given-up retry landing as success has no pid): no pid, no runtime.
    expect(events[5]).not.toHaveProperty('pid');
    expect(events[5]).toMatchObject({ task: '__proto__', queue: 'constructor', attempt: 2 });
  });

  it('holds a job step in far fewer bytes than the event object it stands for', () => {
    const steps: EventBatch = { node: 'node-a', items: [] };
    for (let i = 0; i < 100; i++) steps.items.push([2, 1_000 + i, `job-${i}`, 'noop', 'default', 0, 4242, 1]);
    const objects = pack(batchEvents(steps));
    expect(encodeEvents(steps).length).toBeLessThan(objects.length / 2);
  });

  it('still reads entries written as an array of event objects', () => {
    const raw = pack([
      { type: 'node-online', at: 1, node: 'a' },
      { type: 'job-unheard-of', at: 2, node: 'a' },
    ]);
    expect(decodeEvents(raw)).toEqual({ events: [{ type: 'node-online', at: 1, node: 'a' }], skipped: 1 });
  });

  it('skips steps that name no known type or a name outside the table, and what is no entry at all', () => {
    const raw = pack({
      v: 2,
      node: 'a',
      base: 100,
      names: ['t', 'q'],
      items: [[9, 0, 'j', 0, 1], [0, 0, 'j', 0, 7], [0, 0, 'j', 0, 1, 0], 'text', { at: 1 }],
    });
    const { events, skipped } = decodeEvents(raw);
    expect(events).toEqual([
      { type: 'job-received', at: 100, node: 'a', jobId: 'j', task: 't', queue: 'q', attempt: 0 },
    ]);
    expect(skipped).toBe(4);
    expect(decodeEvents(pack({ v: 3, node: 'a' }))).toEqual({ events: [], skipped: 1 });
    expect(decodeEvents(Buffer.from('not msgpack'))).toMatchObject({ events: [] });
  });

  describe('an event whose fields have the wrong types (written by something else) is skipped, the rest kept', () => {
    const at = 1_700_000_000_000;
    const job = { node: 'a', jobId: 'j', task: 't', queue: 'q', attempt: 0 };
    // One of each type as nodes write them (job-events.ts, worker.ts): all kept.
    const valid = [
      { ...job, type: 'job-received', at },
      { ...job, type: 'job-started', at, pid: 7 },
      { type: 'job-progress', at, node: 'a', jobId: 'j', task: 't', queue: 'q', progress: { any: ['value'] } },
      { ...job, type: 'job-succeeded', at, pid: 7, runtimeMs: 3 },
      { ...job, type: 'job-failed', at, error: { name: 'Error', message: 'x' } },
      { ...job, type: 'job-retried', at, retryAt: at + 1_000, error: { name: 'Error', message: 'x' } },
      { ...job, type: 'job-lost', at, pid: 7, exitCode: null, signal: 'SIGKILL' },
      { ...job, type: 'job-revoked', at },
      { ...job, type: 'job-given-back', at },
      { ...job, type: 'job-deferred', at, dueAt: at + 10 },
      { type: 'process-up', at, node: 'a', pid: 7 },
      { type: 'process-down', at, node: 'a', pid: -1, exitCode: 1, signal: null, reason: 'died' },
      { type: 'scale-up', at, node: 'a', from: 1, to: 2 },
      { type: 'scale-down', at, node: 'a', from: 2, to: 1 },
      { type: 'pool-failed', at, node: 'a', error: { name: 'PoolFailedError', message: 'x' } },
      { type: 'node-online', at, node: 'a' },
      { type: 'node-offline', at, node: 'a' },
      { type: 'node-fenced', at, node: 'a', newerField: 'kept' },
    ];

    it('keeps every event type as nodes write it', () => {
      expect(decodeEvents(pack(valid))).toEqual({ events: valid, skipped: 0 });
    });

    it.each([
      ['at NaN', { type: 'node-online', at: NaN, node: 'a' }],
      ['at past what a Date holds', { type: 'node-online', at: 1e300, node: 'a' }],
      ['no node', { type: 'node-online', at }],
      ['a jobId that is a number', { ...job, type: 'job-succeeded', at, jobId: 5 }],
      ['a task that is an object', { ...job, type: 'job-succeeded', at, task: { a: 1 } }],
      ['no queue', { type: 'job-progress', at, node: 'a', jobId: 'j', task: 't' }],
      ['a runtime that is text', { ...job, type: 'job-succeeded', at, runtimeMs: 'abc' }],
      ['a pid that is an object', { ...job, type: 'job-started', at, pid: {} }],
      ['an error that is a number', { ...job, type: 'job-failed', at, error: 5 }],
      ['an error of the wrong shape', { ...job, type: 'job-failed', at, error: { name: {}, message: [] } }],
      ['no error', { ...job, type: 'job-retried', at, retryAt: at }],
      [
        'a retry time that is text',
        { ...job, type: 'job-retried', at, retryAt: 'soon', error: { name: 'E', message: 'm' } },
      ],
      ['a due time that is an object', { ...job, type: 'job-deferred', at, dueAt: {} }],
      ['a dueAt of text on another type', { ...job, type: 'job-revoked', at, dueAt: 'soon' }],
      [
        'an exit code that is text',
        { type: 'process-down', at, node: 'a', pid: 1, exitCode: 'x', signal: null, reason: 'r' },
      ],
      [
        'a signal that is a list',
        { type: 'process-down', at, node: 'a', pid: 1, exitCode: 1, signal: [], reason: 'r' },
      ],
      [
        'a reason that is a number',
        { type: 'process-down', at, node: 'a', pid: 1, exitCode: 1, signal: null, reason: 7 },
      ],
      ['counts that are not', { type: 'scale-up', at, node: 'a', from: 'a', to: {} }],
      ['an attempt that is negative', { ...job, type: 'job-received', at, attempt: -1 }],
    ])('%s', (_, bad) => {
      expect(decodeEvents(pack([bad, valid[0]]))).toEqual({ events: [valid[0]], skipped: 1 });
    });

    it('skips a step tuple whose attempt, pid or runtime is not a number, and an entry whose base time is not one', () => {
      const raw = pack({
        v: 2,
        node: 'a',
        base: at,
        names: ['t', 'q'],
        items: [
          [1, 0, 'j', 0, 1, 'x', 'y', 'z'],
          [2, 0, 'j', 0, 1, 0, null, 5],
          [2, NaN, 'j', 0, 1, 0, 7, 5],
          [0, 1, 'j', 0, 1, 0],
        ],
      });
      expect(decodeEvents(raw)).toEqual({ events: [{ ...job, type: 'job-received', at: at + 1 }], skipped: 3 });
      const nan = pack({ v: 2, node: 'a', base: NaN, names: ['t', 'q'], items: [[0, 0, 'j', 0, 1, 0]] });
      expect(decodeEvents(nan)).toEqual({ events: [], skipped: 1 });
    });
  });
});
