import { pino, type Logger } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventBatch } from '../../../dist/events/event-batch.js';
import {
  DROP_BLOCK,
  EVENTS_PER_CARRY,
  EVENTS_PER_WRITE,
  EventBuffer,
  FLUSH_AFTER_MS,
  HELD_MAX,
} from '../../../dist/events/event-buffer.js';
import type { NodeEvent } from '../../../dist/events/node-event.js';

const log = pino({ level: 'silent' });
const event = (i: number): NodeEvent => ({ type: 'job-received', at: i, node: 'n', jobId: String(i) });
const ats = (batch: EventBatch | undefined): number[] =>
  (batch?.items ?? []).map((e) => (Array.isArray(e) ? e[1] : e.at));
const range = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);
/** A logger whose lines (level and msg) the test reads. */
interface LogLine {
  level: number;
  msg: string;
  dropped?: number;
}
function recordingLog(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as LogLine) });
  return { log, lines };
}

afterEach(() => {
  vi.useRealTimers();
});

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

  it('drops the oldest past HELD_MAX in one block, keeps the newest, and warns once', () => {
    const { log, lines } = recordingLog();
    const buffer = new EventBuffer('n', () => Promise.resolve(), log);
    for (let i = 0; i < HELD_MAX; i++) buffer.push(event(i));
    expect(lines).toEqual([]);
    buffer.push(event(HELD_MAX));
    // One past the cap: down to HELD_MAX - DROP_BLOCK, the newest, in order.
    for (let i = HELD_MAX + 1; i < HELD_MAX * 2; i++) buffer.push(event(i));
    const kept = buffer.take().flatMap(ats);
    expect(kept.length).toBeLessThanOrEqual(HELD_MAX);
    expect(kept).toEqual(range(HELD_MAX * 2 - kept.length, kept.length));
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
      'events are not reaching the broker; dropping the oldest',
    ]);
    buffer.close();
  });

  it('once a carried write reaches the broker, says how many were dropped, and warns again at the next drop', () => {
    const { log, lines } = recordingLog();
    const buffer = new EventBuffer('n', () => Promise.resolve(), log);
    for (let i = 0; i <= HELD_MAX; i++) buffer.push(event(i));
    expect(buffer.take().flatMap(ats)).toEqual(range(DROP_BLOCK + 1, HELD_MAX - DROP_BLOCK));
    buffer.carried();
    expect(lines.filter((l) => l.level === 30)).toMatchObject([
      { msg: 'events reach the broker again', dropped: DROP_BLOCK + 1 },
    ]);
    for (let i = 0; i <= HELD_MAX; i++) buffer.push(event(i));
    expect(lines.filter((l) => l.level === 40)).toHaveLength(2);
    buffer.close();
  });

  it("a failed write's events are held again ahead of newer ones and written after FLUSH_AFTER_MS", async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const written: number[][] = [];
    const buffer = new EventBuffer(
      'n',
      (batch) => {
        written.push(ats(batch));
        return Promise.resolve();
      },
      log,
    );
    const n = EVENTS_PER_WRITE + EVENTS_PER_CARRY;
    for (let i = 0; i < n; i++) buffer.push(event(i));
    const failed = buffer.take();
    buffer.putBack(failed);
    buffer.push(event(n));
    // No write carries them before the wait is over, however many are held.
    expect(buffer.take()).toEqual([]);
    vi.advanceTimersByTime(FLUSH_AFTER_MS - 1);
    expect(buffer.take()).toEqual([]);
    vi.advanceTimersByTime(1);
    // The flush timer's writes follow one another (setImmediate is not faked).
    await new Promise((resolve) => setImmediate(resolve));
    // The flush timer tried them first, on its own, oldest first.
    expect(written.flat()).toEqual(range(0, n + 1));
    expect(buffer.take()).toEqual([]);
    buffer.close();
  });

  it('after a failed write, the next carried write takes them in order once the wait is over', () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const buffer = new EventBuffer('n', () => Promise.reject(new Error('down')), log);
    for (let i = 0; i < EVENTS_PER_CARRY; i++) buffer.push(event(i));
    buffer.putBack(buffer.take());
    buffer.push(event(EVENTS_PER_CARRY));
    vi.setSystemTime(Date.now() + FLUSH_AFTER_MS);
    expect(buffer.take().flatMap(ats)).toEqual(range(0, EVENTS_PER_CARRY + 1));
    buffer.close();
  });

  it('while a flush writes, no carried write takes newer events ahead of it; a second flush waits its turn', async () => {
    const written: number[][] = [];
    const pending: (() => void)[] = [];
    const buffer = new EventBuffer(
      'n',
      (batch) =>
        new Promise<void>((resolve) => {
          written.push(ats(batch));
          pending.push(resolve);
        }),
      log,
    );
    const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    buffer.push(event(0));
    const first = buffer.flush();
    for (let i = 1; i <= EVENTS_PER_CARRY; i++) buffer.push(event(i));
    expect(buffer.take()).toEqual([]);
    const second = buffer.flush();
    pending.shift()?.();
    await tick();
    // The newer events follow the older, in the flush's own next write.
    expect(written).toEqual([[0], range(1, EVENTS_PER_CARRY)]);
    expect(buffer.take()).toEqual([]);
    pending.shift()?.();
    await Promise.all([first, second]);
    expect(written).toHaveLength(2);
    buffer.push(event(EVENTS_PER_CARRY + 1));
    const third = buffer.flush();
    await tick();
    expect(written[2]).toEqual([EVENTS_PER_CARRY + 1]);
    pending.shift()?.();
    await third;
    buffer.close();
  });

  it('what a write carried is not written again by the flush timer', () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const written: number[] = [];
    const buffer = new EventBuffer(
      'n',
      (batch) => {
        written.push(...ats(batch));
        return Promise.resolve();
      },
      log,
    );
    for (let i = 0; i < EVENTS_PER_CARRY; i++) buffer.push(event(i));
    expect(buffer.take().flatMap(ats)).toEqual(range(0, EVENTS_PER_CARRY));
    buffer.carried();
    vi.advanceTimersByTime(FLUSH_AFTER_MS * 4);
    expect(written).toEqual([]);
    buffer.close();
  });

  it('after close(), a write still on its way that fails arms no timer and holds nothing', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    let fail: (err: Error) => void = () => undefined;
    const buffer = new EventBuffer(
      'n',
      () =>
        new Promise<void>((_, reject) => {
          fail = reject;
        }),
      log,
    );
    buffer.push(event(0));
    // A stop's last flush gave up waiting (Redis away) and closed the buffer; the write fails later.
    const flushed = buffer.flush();
    buffer.close();
    fail(new Error('down'));
    await flushed;
    buffer.push(event(1));
    expect(vi.getTimerCount()).toBe(0);
    vi.setSystemTime(Date.now() + FLUSH_AFTER_MS * 4);
    expect(buffer.take()).toEqual([]);
  });

  it('leaves a few fresh events for a later write: a busy node adds one XADD per many jobs', () => {
    const buffer = new EventBuffer('n', () => Promise.resolve(), log);
    for (let i = 0; i < EVENTS_PER_CARRY - 1; i++) buffer.push(event(i));
    expect(buffer.take()).toEqual([]);
    buffer.push(event(EVENTS_PER_CARRY - 1));
    expect(buffer.take().map((b) => b.items.length)).toEqual([EVENTS_PER_CARRY]);
    buffer.close();
  });

  it('flush() writes everything held, in writes of EVENTS_PER_WRITE, and keeps what a failed write held', async () => {
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
    fail = false;
    await buffer.flush();
    expect(written).toEqual([EVENTS_PER_WRITE, EVENTS_PER_WRITE, 1, 1]);
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
