/**
 * "missed ticks" is said by the node that fires them, not by one that was
 * away while another node fired them: a scheduler stopped for a few ticks
 * (as a paused node is) comes back with a stale view, claims the ticks it
 * thinks missed, loses the claim, and logs nothing about them.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createBroker } from '../../dist/broker/index.js';
import type { Broker } from '../../dist/broker/types.js';
import { defineSchedule } from '../../dist/schedule/define.js';
import { Scheduler } from '../../dist/schedule/scheduler.js';
import { captureLog, silent } from '../helpers/worker.js';

const missed = (lines: Record<string, unknown>[]): unknown[] =>
  lines.filter((l) => typeof l.msg === 'string' && l.msg.includes('missed ticks'));

describe('the missed-ticks line', () => {
  const open: { stop(): Promise<void> }[] = [];
  let broker: Broker | undefined;
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.stop()));
    await broker?.close();
  });

  it('is not logged by a node whose claim of the ticks another node fired lost', async () => {
    broker = createBroker(`memory://missed-log-${randomUUID()}`, { logger: silent });
    await broker.connect();
    const schedule = defineSchedule({ beat: { task: 'beat', every: '1s', misfire: 'all' } });
    const a = new Scheduler(broker, schedule, silent);
    const away = captureLog();
    const b = new Scheduler(broker, schedule, away.log);
    open.push(a, b);
    const last = async (): Promise<number> => (await broker!.listSchedule())[0]?.last ?? 0;
    a.start();
    b.start();
    await expect.poll(last).toBeGreaterThan(0);
    // b is away for at least two ticks, which a fires.
    await b.stop();
    const leftAt = await last();
    await expect.poll(last).toBeGreaterThanOrEqual(leftAt + 2_000);
    b.start();
    // b's stale view makes it claim the ticks a fired at once; its claim loses, and it adopts a's state.
    await expect.poll(last).toBeGreaterThanOrEqual(leftAt + 4_000);
    expect(missed(away.lines)).toEqual([]);
    // With both away, the ticks are missed for real: b, back first, fires them and says so.
    await Promise.all([a.stop(), b.stop()]);
    const quietAt = await last();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    b.start();
    await expect.poll(() => missed(away.lines).length).toBe(1);
    expect(missed(away.lines)[0]).toMatchObject({ entry: 'beat', misfire: 'all', since: quietAt });
  });
});
