/**
 * The Heartbeat's schedule, on fake timers with a scripted broker (only the
 * two calls the Heartbeat makes): it beats every interval, and right after
 * another node's lease deadline when that comes first, so a dead node is
 * recovered one lease after its last beat rather than up to an interval later.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Heartbeat, heartbeatInterval } from '../../../dist/cluster/heartbeat.js';
import type { Broker, ControlRequest, HeartbeatReply } from '../../../dist/broker/types.js';

const silent = pino({ level: 'silent' });

function scripted(replies: (() => HeartbeatReply)[]) {
  const beats: number[] = [];
  const recovered: { dead: string; at: number }[] = [];
  const broker = {
    heartbeat: () => {
      beats.push(Date.now());
      return Promise.resolve((replies.shift() ?? (() => ({ fenced: false, expired: [], nextDueAt: undefined })))());
    },
    recover: (dead: string) => {
      recovered.push({ dead, at: Date.now() });
      return Promise.resolve(0);
    },
  } as unknown as Broker;
  return { broker, beats, recovered };
}

describe('Heartbeat', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('beats every half lease', () => {
    expect(heartbeatInterval(20_000)).toBe(10_000);
    expect(heartbeatInterval(100)).toBe(250);
  });

  it('tries a failed beat again after 1 s, doubling up to the interval, then beats on the interval again', async () => {
    const start = Date.now();
    const { broker, beats } = scripted([]);
    const ok = broker.heartbeat.bind(broker);
    let failing = 4;
    broker.heartbeat = (...args: Parameters<Broker['heartbeat']>) => {
      if (failing-- > 0) {
        beats.push(Date.now());
        return Promise.reject(new Error('Redis away'));
      }
      return ok(...args);
    };
    const hb = new Heartbeat(
      broker,
      5_000,
      5,
      { nodeId: () => 'me#1', queues: () => ['q'], onFenced: async () => {}, onDue: () => {} },
      silent,
    );
    hb.start();
    await vi.advanceTimersByTimeAsync(5_000 + 1_000 + 2_000 + 4_000 + 5_000 + 5_000);
    expect(beats.map((t) => t - start)).toEqual([5_000, 6_000, 8_000, 12_000, 17_000, 22_000]);
    expect(hb.health().failures).toBe(0);
    await hb.stop();
  });

  it('beats right after the next lease of another node expires, and recovers it then', async () => {
    const start = Date.now();
    const { broker, beats, recovered } = scripted([
      // first beat: another node's lease ends 1 s from now (it died 19 s ago)
      () => ({ fenced: false, expired: [], nextDueAt: undefined, nextExpiryAt: Date.now() + 1_000 }),
      () => ({ fenced: false, expired: ['dead#1'], nextDueAt: undefined }),
    ]);
    const hb = new Heartbeat(
      broker,
      8_000,
      5,
      { nodeId: () => 'me#1', queues: () => ['q'], onFenced: async () => {}, onDue: () => {} },
      silent,
    );
    hb.start();
    await vi.advanceTimersByTimeAsync(8_000);
    expect(beats).toEqual([start + 8_000]);
    await vi.advanceTimersByTimeAsync(1_100);
    expect(beats).toHaveLength(2);
    expect(beats[1]! - beats[0]!).toBeLessThan(8_000);
    expect(recovered.map((r) => r.dead)).toEqual(['dead#1']);
    // back to the regular interval
    await vi.advanceTimersByTimeAsync(8_000);
    expect(beats).toHaveLength(3);
    expect(beats[2]! - beats[1]!).toBe(8_000);
    await hb.stop();
  });

  it('beatSoon: a beat at once, and one right after a beat under way', async () => {
    const start = Date.now();
    let release: (() => void) | undefined;
    const { broker, beats } = scripted([
      () => ({ fenced: false, expired: [], nextDueAt: undefined }),
      () => ({ fenced: false, expired: [], nextDueAt: undefined }),
    ]);
    const slow = broker.heartbeat.bind(broker);
    // The second beat hangs until released: beatSoon() during it asks for a third right after.
    broker.heartbeat = (...args: Parameters<Broker['heartbeat']>) =>
      beats.length === 1 ? new Promise((resolve) => (release = () => resolve(slow(...args)))) : slow(...args);
    const hb = new Heartbeat(
      broker,
      8_000,
      5,
      { nodeId: () => 'me#1', queues: () => ['q'], onFenced: async () => {}, onDue: () => {} },
      silent,
    );
    hb.start();
    hb.beatSoon();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toEqual([start]);
    hb.beatSoon();
    await vi.advanceTimersByTimeAsync(0);
    expect(release).toBeDefined();
    hb.beatSoon();
    release!();
    await vi.advanceTimersByTimeAsync(0);
    expect(beats).toEqual([start, start, start]);
    // then the regular interval
    await vi.advanceTimersByTimeAsync(8_000);
    expect(beats).toEqual([start, start, start, start + 8_000]);
    await hb.stop();
  });

  it('hands the control requests of a beat to onControl', async () => {
    const request: ControlRequest = { id: 'r1', command: 'ping', args: [] };
    const { broker } = scripted([() => ({ fenced: false, expired: [], nextDueAt: undefined, control: [request] })]);
    const got: ControlRequest[][] = [];
    const hb = new Heartbeat(
      broker,
      1_000,
      5,
      {
        nodeId: () => 'me#1',
        queues: () => ['q'],
        onFenced: async () => {},
        onDue: () => {},
        onControl: (r) => got.push(r),
      },
      silent,
    );
    hb.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(got).toEqual([[request]]);
    await hb.stop();
  });
  it('calls onBeat after each beat that renewed the lease, not after a failed or fenced one', async () => {
    const { broker } = scripted([
      () => ({ fenced: false, expired: [], nextDueAt: undefined }),
      () => {
        throw new Error('Redis away');
      },
      () => ({ fenced: true, expired: [], nextDueAt: undefined }),
      () => ({ fenced: false, expired: [], nextDueAt: undefined }),
    ]);
    const seen: string[] = [];
    const hb = new Heartbeat(
      broker,
      1_000,
      5,
      {
        nodeId: () => 'me#1',
        queues: () => ['q'],
        onFenced: () => {
          seen.push('fenced');
          return Promise.resolve();
        },
        onDue: () => {},
        onBeat: () => seen.push('beat'),
      },
      silent,
    );
    hb.start();
    // 1 s: renewed; 2 s: fails (retried 1 s later); 3 s: fenced; 4 s: renewed.
    await vi.advanceTimersByTimeAsync(4_000);
    expect(seen).toEqual(['beat', 'fenced', 'beat']);
    await hb.stop();
  });

  it('a recovery that fails after a good beat is logged as a recovery, and the heartbeat counts no failure', async () => {
    const { broker, recovered } = scripted([
      () => ({ fenced: false, expired: ['dead#1'], nextDueAt: undefined }),
      () => ({ fenced: false, expired: ['dead#1'], nextDueAt: undefined }),
    ]);
    let failing = true;
    broker.recover = (dead: string) => {
      recovered.push({ dead, at: Date.now() });
      return failing ? Promise.reject(new Error('Connection is closed.')) : Promise.resolve(2);
    };
    const lines: Record<string, unknown>[] = [];
    const log = pino(
      { level: 'debug' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const hb = new Heartbeat(
      broker,
      5_000,
      5,
      { nodeId: () => 'me#1', queues: () => ['q'], onFenced: async () => {}, onDue: () => {} },
      log,
    );
    hb.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(recovered.map((r) => r.dead)).toEqual(['dead#1']);
    // The beat renewed the lease: the broker answered, and readiness must not say it failed.
    expect(hb.health()).toMatchObject({ failures: 0, lastFailure: undefined });
    expect(lines.some((l) => typeof l.msg === 'string' && l.msg.startsWith('heartbeat failed'))).toBe(false);
    expect(lines).toContainEqual(
      expect.objectContaining({
        deadNode: 'dead#1',
        msg: expect.stringMatching(/^could not recover the jobs of node dead#1/) as unknown,
        err: expect.objectContaining({ message: 'Connection is closed.' }) as unknown,
      }),
    );
    // Reported again by a later beat (still expired, or its recovery claim lapsed): recovered then.
    failing = false;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(recovered.map((r) => r.dead)).toEqual(['dead#1', 'dead#1']);
    await hb.stop();
  });
});
