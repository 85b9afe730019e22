/**
 * The dashboard's samples never overlap: callers asking while a read is in
 * flight share it (one interval, one history entry), and a sample asked
 * for after an action starts once the read in flight is done.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryBroker } from '../../../dist/broker/memory/memory-broker.js';
import { EventTally } from '../../../dist/dashboard/event-tally.js';
import { Sampler, type Snapshot } from '../../../dist/dashboard/sampler.js';

const silent = pino({ level: 'silent' });
const brokers: MemoryBroker[] = [];

afterEach(async () => {
  for (const b of brokers.splice(0)) await b.close();
});

function setup(): { broker: MemoryBroker; sampler: Sampler; sent: Snapshot[] } {
  const broker = MemoryBroker.open(`memory://sampler-${randomUUID()}`, { logger: silent });
  brokers.push(broker);
  const sent: Snapshot[] = [];
  const options = { intervalMs: 60_000, controlTimeoutMs: 1_000, historySize: 10 };
  const sampler = new Sampler(broker, new EventTally(), options, (s) => sent.push(s), silent);
  return { broker, sampler, sent };
}

describe('the dashboard sampler', () => {
  it('two concurrent sampleOnce() calls make one read and get the same snapshot', async () => {
    const { broker, sampler, sent } = setup();
    const reads = vi.spyOn(broker, 'listNodes');
    const [a, b] = await Promise.all([sampler.sampleOnce(), sampler.sampleOnce()]);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(b).toBe(a);
    expect(sent).toEqual([a]);
    expect(sampler.history.all()).toHaveLength(1);
  });

  it('sampleAfter() waits for the read in flight, then reads once for every caller', async () => {
    const { broker, sampler, sent } = setup();
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const counts = broker.counts.bind(broker);
    vi.spyOn(broker, 'counts').mockImplementationOnce(async (names) => {
      await gate;
      return counts(names);
    });
    const reads = vi.spyOn(broker, 'listNodes');
    const first = sampler.sampleOnce();
    const after = [sampler.sampleAfter(), sampler.sampleAfter()];
    await vi.waitFor(() => expect(reads).toHaveBeenCalledTimes(1));
    expect(sent).toHaveLength(0);
    release();
    const [a, b, c] = await Promise.all([first, ...after]);
    expect(reads).toHaveBeenCalledTimes(2);
    expect(c).toBe(b);
    expect(b).not.toBe(a);
    expect(sent).toEqual([a, b]);
    expect(sampler.history.all().map((s) => s.at)).toEqual([a?.sample.at, b?.sample.at]);
  });

  it('sampleAfter() with no read in flight reads at once', async () => {
    const { broker, sampler, sent } = setup();
    const reads = vi.spyOn(broker, 'listNodes');
    const s = await sampler.sampleAfter();
    expect(reads).toHaveBeenCalledTimes(1);
    expect(sent).toEqual([s]);
  });
});
