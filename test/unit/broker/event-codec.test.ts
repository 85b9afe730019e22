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
});
