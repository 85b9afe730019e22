import { describe, expect, it } from 'vitest';
import { EventLog } from '../../../dist/broker/memory/event-log.js';
import type { NodeEvent } from '../../../dist/events/node-event.js';

const event = (at: number): NodeEvent => ({ type: 'job-received', at, node: 'n', jobId: `j${at}` });
const ats = (events: readonly NodeEvent[]): number[] => events.map((e) => e.at);

describe("memory://'s EventLog", () => {
  const filled = (): EventLog => {
    const log = new EventLog();
    for (const first of [1, 4, 7]) log.append([event(first), event(first + 1), event(first + 2)], 100);
    return log;
  };

  it('gives the last events across entries, oldest first, and the position after the last entry', () => {
    const log = filled();
    expect(ats(log.recent(4).events)).toEqual([6, 7, 8, 9]);
    expect(ats(log.recent(100).events)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(log.recent(0).events).toEqual([]);
    expect(log.recent(4).position).toBe('3');
    expect(new EventLog().recent(5)).toEqual({ events: [], position: '0' });
  });

  it('hands each reader deep copies, and keeps one of what the writer gave: what one changes, no other sees', () => {
    const log = new EventLog();
    const written: NodeEvent = {
      type: 'job-failed',
      at: 1,
      node: 'n',
      jobId: 'j1',
      error: { name: 'E', message: 'm' },
    };
    log.append([written], 100);
    (written.error as { message: string }).message = 'changed by the writer';
    const [first] = log.recent(1).events;
    expect(first?.error?.message).toBe('m');
    (first?.error as { message: string }).message = 'changed by a reader';
    expect(log.recent(1).events[0]?.error?.message).toBe('m');
    expect(log.after('0')?.events[0]?.error?.message).toBe('m');
  });

  it('keeps the newest maxLen entries', () => {
    const log = new EventLog();
    for (let i = 1; i <= 5; i++) log.append([event(i)], 3);
    expect(ats(log.recent(10).events)).toEqual([3, 4, 5]);
    expect(ats(log.after('3')?.events ?? [])).toEqual([4, 5]);
  });
});
