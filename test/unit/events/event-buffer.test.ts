import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EVENTS_PER_WRITE, EventBuffer } from '../../../dist/events/event-buffer.js';
import type { NodeEvent } from '../../../dist/events/node-event.js';

const log = pino({ level: 'silent' });
const event = (i: number): NodeEvent => ({ type: 'job-received', at: i, node: 'n', jobId: String(i) });

describe('EventBuffer', () => {
  it('hands a write at most EVENTS_PER_WRITE events, oldest first, and the rest to the next', () => {
    const buffer = new EventBuffer(() => Promise.resolve(), log);
    for (let i = 0; i < EVENTS_PER_WRITE + 3; i++) buffer.push(event(i));
    const first = buffer.take();
    expect(first).toHaveLength(EVENTS_PER_WRITE);
    expect(first?.[0]?.at).toBe(0);
    expect(buffer.take()?.map((e) => e.at)).toEqual([EVENTS_PER_WRITE, EVENTS_PER_WRITE + 1, EVENTS_PER_WRITE + 2]);
    expect(buffer.take()).toBeUndefined();
    buffer.close();
  });

  it('flush() writes everything held, in writes of EVENTS_PER_WRITE, and stops at a failed write', async () => {
    const written: number[] = [];
    let fail = false;
    const buffer = new EventBuffer((batch) => {
      if (fail) return Promise.reject(new Error('down'));
      written.push(batch.length);
      return Promise.resolve();
    }, log);
    for (let i = 0; i < EVENTS_PER_WRITE * 2 + 1; i++) buffer.push(event(i));
    await buffer.flush();
    expect(written).toEqual([EVENTS_PER_WRITE, EVENTS_PER_WRITE, 1]);
    fail = true;
    buffer.push(event(1));
    await buffer.flush();
    expect(buffer.take()).toBeUndefined();
    buffer.close();
  });
});
