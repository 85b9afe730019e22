/**
 * A node's probes and metrics on a Redis that stops answering once the node
 * runs (SIGSTOP: its connections stay open, nothing answers) and on one
 * that restarts empty. A node's broker calls have no timeout, so a frozen
 * Redis fails none of them: readiness must follow how long ago the broker
 * last answered a heartbeat, not only failures and the lease. Freezing is
 * server-wide, so each test has a redis-server of its own.
 */
import { describe, expect, it } from 'vitest';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { makeWorker, uniqueName } from '../helpers/worker.js';

const own = ownRedisPerTest();

async function probe(url: string): Promise<{ status: number; checks: Record<string, string> }> {
  const res = await fetch(url);
  const body = (await res.json()) as { checks: Record<string, string> };
  return { status: res.status, checks: body.checks };
}

describe('probes on a frozen Redis', () => {
  it('/readyz goes not ready while Redis does not answer the heartbeat, before the lease runs out, and ready again once it answers', async () => {
    // A lease long enough that the freeze below never lapses it: what /readyz says comes from the silence alone.
    const worker = makeWorker({
      broker: own.server.url,
      namespace: uniqueName('ns'),
      lease: 8000,
      healthPort: 0,
      healthHost: '127.0.0.1',
    });
    await worker.start();
    const base = worker.endpoints.health as string;
    expect((await probe(`${base}/readyz`)).status).toBe(200);

    own.server.pause();
    await expect.poll(async () => (await probe(`${base}/readyz`)).checks.broker).toMatch(/^unreachable: /);
    const frozen = await probe(`${base}/readyz`);
    expect(frozen.status).toBe(503);
    // The silence alone said it: nothing failed, and the lease still holds.
    expect(frozen.checks.lease).toBe('ok');
    expect(frozen.checks.broker).toMatch(/no heartbeat answered/);
    // Alive: a restart would not bring Redis back.
    expect((await probe(`${base}/healthz`)).status).toBe(200);

    own.server.resume();
    await expect.poll(async () => (await probe(`${base}/readyz`)).status).toBe(200);
    expect((await probe(`${base}/readyz`)).checks.broker).toBe('ok');
    await worker.stop();
  });

  it('/healthz stays 200 through a freeze that outlasts the lease: both loops wait on Redis, a restart would not help', async () => {
    const lease = 2000;
    const interval = 1000; // heartbeatInterval(2000): a beat every half lease
    const worker = makeWorker({
      broker: own.server.url,
      namespace: uniqueName('ns'),
      lease,
      healthPort: 0,
      healthHost: '127.0.0.1',
    });
    await worker.start();
    const base = worker.endpoints.health as string;
    expect((await probe(`${base}/healthz`)).status).toBe(200);

    own.server.pause();
    // Until no beat has ended for the interval plus the lease (a lapse past one interval, with room for the
    // last beat's round trip): the heartbeat's call is then as overdue as a hung one, and the fetch loop's too.
    const live: number[] = [];
    await expect
      .poll(
        async () => {
          live.push((await probe(`${base}/healthz`)).status);
          const lapsed = /^not confirmed for (\d+) ms/.exec((await probe(`${base}/readyz`)).checks.lease ?? '');
          return lapsed !== null && Number(lapsed[1]) > interval + 1000;
        },
        { timeout: 30_000 },
      )
      .toBe(true);
    const frozen = await probe(`${base}/healthz`);
    expect(frozen).toEqual({ status: 200, checks: { pool: 'ok', consumer: 'ok', heartbeat: 'ok' } });
    expect(live.every((status) => status === 200)).toBe(true);
    expect((await probe(`${base}/readyz`)).status).toBe(503);

    own.server.resume();
    await expect.poll(async () => (await probe(`${base}/readyz`)).status, { timeout: 30_000 }).toBe(200);
    await worker.stop();
  });
});
