import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { EventBatch } from '../../../dist/events/event-batch.js';
import { EVENTS_PER_CARRY, EVENTS_PER_WRITE, EventBuffer } from '../../../dist/events/event-buffer.js';
import type { NodeEvent } from '../../../dist/events/node-event.js';

const log = pino({ level: 'silent' });
const event = (i: number): NodeEvent => ({ type: 'job-received', at: i, node: 'n', jobId: String(i) });
const ats = (batch: EventBatch | undefined): number[] =>
  (batch?.items ?? []).map((e) => (Array.isArray(e) ? e[1] : e.at));

describe('EventBuffer', () => {
  it('hands a write at most EVENTS_PER_WRITE events, oldest first, and the rest to the next', () => {
    const buffer = new EventBuffer('n', () => Promise.resolve(), log);
    for (let i = 0; i < EVENTS_PER_WRITE + EVENTS_PER_CARRY; i++) buffer.push(event(i));
    const first = buffer.take();
    expect(first?.node).toBe('n');
    expect(first?.items).toHaveLength(EVENTS_PER_WRITE);
    expect(ats(first)[0]).toBe(0);
    expect(ats(buffer.take())[0]).toBe(EVENTS_PER_WRITE);
    expect(buffer.take()).toBeUndefined();
    buffer.close();
  });

  it('leaves a few fresh events for a later write: a busy node adds one XADD per many jobs', () => {
    const buffer = new EventBuffer('n', () => Promise.resolve(), log);
    for (let i = 0; i < EVENTS_PER_CARRY - 1; i++) buffer.push(event(i));
    expect(buffer.take()).toBeUndefined();
    buffer.push(event(EVENTS_PER_CARRY - 1));
    expect(buffer.take()?.items).toHaveLength(EVENTS_PER_CARRY);
    buffer.close();
  });

  it('flush() writes everything held, in writes of EVENTS_PER_WRITE, and stops at a failed write', async () => {
    const written: number[] = [];
    let fail = false;
    const buffer = new EventBuffer(
      'n',
      (batch) => {
        if (fail) return Promise.reject(new Error('down'));
        written.push(batch.items.length);
        return Promise.resolve();
      },
      log,
    );
    for (let i = 0; i < EVENTS_PER_WRITE * 2 + 1; i++) buffer.push(event(i));
    await buffer.flush();
    expect(written).toEqual([EVENTS_PER_WRITE, EVENTS_PER_WRITE, 1]);
    fail = true;
    buffer.push(event(1));
    await buffer.flush();
    expect(written).toEqual([EVENTS_PER_WRITE, EVENTS_PER_WRITE, 1]);
    await buffer.flush();
    expect(written).toHaveLength(3);
    buffer.close();
  });

  it('writes a few events on their own when no write comes to carry them', async () => {
    const written: EventBatch[] = [];
    const buffer = new EventBuffer(
      'n',
      (batch) => {
        written.push(batch);
        return Promise.resolve();
      },
      log,
    );
    buffer.push(event(7));
    await expect.poll(() => written.length).toBe(1);
    expect(ats(written[0])).toEqual([7]);
    buffer.close();
  });
});
