/**
 * What the dashboard keeps in memory stays bounded, and its numbers are the
 * ones the events say: runtimes per task (percentiles over the last ones),
 * job trails (the oldest jobs go first), outcomes between two samples.
 */
import { describe, expect, it } from 'vitest';
import { EventTally } from '../../../dist/dashboard/event-tally.js';
import { History, makeSample } from '../../../dist/dashboard/history.js';
import { JobTrails, STEP_ERROR_MAX, STEPS_KEPT, TRAILS_KEPT } from '../../../dist/dashboard/job-trails.js';
import { Runtimes, RUNTIMES_KEPT, TASKS_KEPT } from '../../../dist/dashboard/runtimes.js';
import type { NodeEvent } from '../../../dist/events/node-event.js';

const event = (over: Partial<NodeEvent>): NodeEvent => ({ type: 'job-succeeded', at: 1, node: 'n', ...over });

describe('the dashboard tallies', () => {
  it('runtimes: nearest-rank percentiles over the last RUNTIMES_KEPT of each task, tasks by name', () => {
    const r = new Runtimes();
    for (let ms = 1; ms <= 100; ms++) r.add('b', ms);
    r.add('a', 7);
    expect(r.percentiles()).toEqual([
      { task: 'a', count: 1, p50: 7, p90: 7, p99: 7, max: 7 },
      { task: 'b', count: 100, p50: 50, p90: 90, p99: 99, max: 100 },
    ]);
    for (let i = 0; i < RUNTIMES_KEPT; i++) r.add('b', 1000);
    expect(r.percentiles()[1]).toEqual({
      task: 'b',
      count: 100 + RUNTIMES_KEPT,
      p50: 1000,
      p90: 1000,
      p99: 1000,
      max: 1000,
    });
  });

  it('runtimes: a task first seen past TASKS_KEPT is not tracked; "__proto__" is a task like any other', () => {
    const r = new Runtimes();
    r.add('__proto__', 3);
    for (let i = 1; i < TASKS_KEPT + 10; i++) r.add(`t${i}`, 1);
    const tasks = r.percentiles().map((t) => t.task);
    expect(tasks).toHaveLength(TASKS_KEPT);
    expect(tasks).toContain('__proto__');
  });

  it('trails: the last STEPS_KEPT steps of the last TRAILS_KEPT jobs', () => {
    const trails = new JobTrails();
    for (let i = 0; i < STEPS_KEPT + 5; i++) trails.add(event({ jobId: 'j', type: 'job-progress', at: i }));
    expect(trails.of('j').map((s) => s.at)).toEqual(Array.from({ length: STEPS_KEPT }, (_, i) => i + 5));
    for (let i = 0; i < TRAILS_KEPT; i++) trails.add(event({ jobId: `k${i}` }));
    expect(trails.of('j')).toEqual([]);
    expect(trails.of('k0')).toHaveLength(1);
    trails.add(event({ type: 'process-up', pid: 1 }));
    expect(trails.of('undefined')).toEqual([]);
  });

  it('trails: an error name or message past STEP_ERROR_MAX is cut (a task may throw megabytes), never in half a pair', () => {
    const trails = new JobTrails();
    const long = 'x'.repeat(STEP_ERROR_MAX * 200);
    // The pair 😀 straddles the cut: its high half alone would be no character.
    const straddling = `${'y'.repeat(STEP_ERROR_MAX - 2)}😀${long}`;
    trails.add(event({ jobId: 'j', type: 'job-retried', error: { name: long, message: straddling } }));
    trails.add(event({ jobId: 'j', type: 'job-failed', error: { name: 'Error', message: 'short' } }));
    const [cut, whole] = trails.of('j').map((s) => s.error);
    expect(cut?.name).toBe(`${'x'.repeat(STEP_ERROR_MAX - 1)}…`);
    expect(cut?.message).toBe(`${'y'.repeat(STEP_ERROR_MAX - 2)}…`);
    expect(whole).toEqual({ name: 'Error', message: 'short' });
  });

  it('outcomes: counted between two takes, not those from before the start; a sample turns them into rates', () => {
    const tally = new EventTally();
    tally.add(event({ task: 't', runtimeMs: 5 }), false);
    tally.add(event({ task: 't', runtimeMs: 5 }), true);
    tally.add(event({ type: 'job-failed', task: 't', runtimeMs: 9 }), true);
    tally.add(event({ type: 'job-retried', task: 't', runtimeMs: 9 }), true);
    const outcomes = tally.take();
    expect(outcomes).toEqual({ succeeded: 1, failed: 1 });
    expect(tally.take()).toEqual({ succeeded: 0, failed: 0 });
    expect(tally.runtimes.percentiles()[0]?.count).toBe(3);
    const sample = makeSample(10, [], { succeeded: 3, failed: 1 }, 2000);
    expect(sample).toEqual({ at: 10, queues: [], succeeded: 1.5, failed: 0.5, failureRate: 0.25 });
    const history = new History(2);
    for (const at of [1, 2, 3]) history.add(makeSample(at, [], outcomes, 1000));
    expect(history.all().map((s) => s.at)).toEqual([2, 3]);
  });
});
