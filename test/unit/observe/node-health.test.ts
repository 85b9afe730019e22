import { describe, expect, it } from 'vitest';
import { liveness, readiness, type HealthInputs } from '../../../dist/observe/node-health.js';

const running: HealthInputs = {
  state: 'running',
  failure: undefined,
  consumer: { running: true, stuckForMs: 0, returnedAgoMs: 0, brokerFailures: 0 },
  heartbeat: { running: true, stuckForMs: 0, endedAgoMs: 0, silentForMs: 0, failures: 0 },
  leaseLapsedMs: 0,
  fencing: false,
};

describe('node health', () => {
  it('a running node that turns and reaches the broker is alive and ready', () => {
    expect(liveness(running).ok).toBe(true);
    expect(readiness(running)).toEqual({
      ok: true,
      checks: { pool: 'ok', consumer: 'ok', heartbeat: 'ok', state: 'ok', lease: 'ok', broker: 'ok' },
    });
  });

  it('a stuck fetch loop or heartbeat, an ended loop or a failed pool is not alive', () => {
    expect(liveness({ ...running, consumer: { ...running.consumer, stuckForMs: 1500.4 } }).checks.consumer).toBe(
      "the fetch loop is stuck: a broker call is 1500 ms past its deadline, while the heartbeat's come back",
    );
    expect(liveness({ ...running, consumer: { ...running.consumer, running: false } }).ok).toBe(false);
    expect(liveness({ ...running, heartbeat: { ...running.heartbeat, stuckForMs: 10 } }).ok).toBe(false);
    expect(liveness({ ...running, failure: 'children keep dying' }).checks.pool).toBe('failed: children keep dying');
  });

  it("a loop is stuck only while the other one's calls come back: when neither does, Redis is frozen and the node alive", () => {
    // The heartbeat's last beat ended 400 ms ago, after the fetch call's deadline passed (1,500 ms ago): the fault is ours.
    const fetchHangs = {
      ...running,
      consumer: { ...running.consumer, stuckForMs: 1500, returnedAgoMs: 9000 },
      heartbeat: { ...running.heartbeat, endedAgoMs: 400 },
    };
    expect(liveness(fetchHangs).checks.consumer).toMatch(/^the fetch loop is stuck/);
    const beatHangs = {
      ...running,
      consumer: { ...running.consumer, returnedAgoMs: 30 },
      heartbeat: { ...running.heartbeat, stuckForMs: 2000, endedAgoMs: 20_000 },
    };
    expect(liveness(beatHangs).checks.heartbeat).toMatch(/^the heartbeat is stuck/);
    // Neither came back since the other stalled: Redis answers no one.
    const frozen = {
      ...running,
      consumer: { ...running.consumer, stuckForMs: 15_000, returnedAgoMs: 26_000 },
      heartbeat: { ...running.heartbeat, stuckForMs: 2000, endedAgoMs: 20_000, silentForMs: 20_000 },
      leaseLapsedMs: 7000,
    };
    expect(liveness(frozen)).toEqual({ ok: true, checks: { pool: 'ok', consumer: 'ok', heartbeat: 'ok' } });
    const ready = readiness(frozen);
    expect(ready.ok).toBe(false);
    expect(ready.checks.broker).toMatch(/^unreachable: no heartbeat answered/);
  });

  it('starting and stopping are alive but not ready; the loop is not judged then', () => {
    for (const state of ['created', 'connecting', 'stopping', 'stopped'] as const) {
      const h = { ...running, state, consumer: { ...running.consumer, running: false } };
      expect(liveness(h).ok).toBe(true);
      expect(readiness(h)).toMatchObject({ ok: false, checks: { state } });
    }
  });

  it('fenced, a lapsed lease, or failing broker calls are alive but not ready', () => {
    expect(readiness({ ...running, fencing: true }).checks.lease).toBe('fenced: re-registering');
    expect(readiness({ ...running, leaseLapsedMs: 250 }).checks.lease).toBe('not confirmed for 250 ms past its end');
    const cut = { ...running, heartbeat: { ...running.heartbeat, failures: 3 } };
    expect(liveness(cut).ok).toBe(true);
    expect(readiness(cut).checks.broker).toBe('unreachable: the last 3 calls failed');
  });

  it('a broker that leaves the heartbeat unanswered (frozen: no call fails) is unreachable, and the node alive', () => {
    const silent = { ...running, heartbeat: { ...running.heartbeat, silentForMs: 7400.2 } };
    expect(liveness(silent).ok).toBe(true);
    expect(readiness(silent)).toMatchObject({
      ok: false,
      checks: {
        lease: 'ok',
        broker: 'unreachable: no heartbeat answered for 7400 ms (Redis frozen, overloaded or cut off)',
      },
    });
  });

  it('says what the broker calls fail with, and a broker that refuses them is not called unreachable', () => {
    const away = {
      ...running,
      consumer: {
        ...running.consumer,
        brokerFailures: 2,
        lastFailure: { message: 'Connection is closed.', refused: false },
      },
    };
    expect(readiness(away).checks.broker).toBe('unreachable: the last 2 calls failed (Connection is closed.)');
    const refused = {
      ...running,
      heartbeat: {
        ...running.heartbeat,
        failures: 6,
        lastFailure: {
          message: 'Redis refused the heartbeat: WRONGTYPE … ({p}:nodes is a string, not a zset)',
          refused: true,
        },
      },
    };
    expect(readiness(refused).checks.broker).toBe(
      'refusing: the last 6 calls failed (Redis refused the heartbeat: WRONGTYPE … ({p}:nodes is a string, not a zset))',
    );
  });
});
