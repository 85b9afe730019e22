import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { EventBatch } from '../../../dist/events/event-batch.js';
import { EVENTS_PER_CARRY, EVENTS_PER_WRITE, EventBuffer, HELD_MAX } from '../../../dist/events/event-buffer.js';
import type { NodeEvent } from '../../../dist/events/node-event.js';

const log = pino({ level: 'silent' });
const event = (i: number): NodeEvent => ({ type: 'job-received', at: i, node: 'n', jobId: String(i) });
const ats = (batch: EventBatch | undefined): number[] =>
  (batch?.items ?? []).map((e) => (Array.isArray(e) ? e[1] : e.at));

describe('EventBuffer', () => {
  it('hands a write every event held, oldest first, an entry per EVENTS_PER_WRITE', () => {
    const buffer = new EventBuffer('n', () => Promise.resolve(), log);
    // More than one fetch's worth: a node whose fetches bring many jobs makes more events than one entry holds.
    const n = EVENTS_PER_WRITE * 3 + EVENTS_PER_CARRY;
    for (let i = 0; i < n; i++) buffer.push(event(i));
    const batches = buffer.take();
    expect(batches.map((b) => b.items.length)).toEqual([
      EVENTS_PER_WRITE,
      EVENTS_PER_WRITE,
      EVENTS_PER_WRITE,
      EVENTS_PER_CARRY,
    ]);
    expect(batches.every((b) => b.node === 'n')).toBe(true);
    expect(batches.flatMap(ats)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(buffer.take()).toEqual([]);
    buffer.close();
  });

  it('drops the oldest past HELD_MAX, keeps the newest, and warns once', () => {
    const warnings: string[] = [];
    const warnLog = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    const buffer = new EventBuffer('n', () => Promise.resolve(), warnLog);
    const n = HELD_MAX * 2;
    for (let i = 0; i < n; i++) buffer.push(event(i));
    const kept = buffer.take().flatMap(ats);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThanOrEqual(HELD_MAX);
    // What is kept is the newest, in order, with nothing missing in between.
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => n - kept.length + i));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/dropping the oldest/);
    buffer.close();
  });

  it('leaves a few fresh events for a later write: a busy node adds one XADD per many jobs', () => {
    const buffer = new EventBuffer('n', () => Promise.resolve(), log);
    for (let i = 0; i < EVENTS_PER_CARRY - 1; i++) buffer.push(event(i));
    expect(buffer.take()).toEqual([]);
    buffer.push(event(EVENTS_PER_CARRY - 1));
    expect(buffer.take().map((b) => b.items.length)).toEqual([EVENTS_PER_CARRY]);
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
