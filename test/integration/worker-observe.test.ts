/**
 * A node's metrics (`metricsPort`) and health probes (`healthPort`): real
 * Redis, real children, the endpoints read over HTTP. The scraped text is
 * parsed and its values must move as jobs run; the probes must follow the
 * node through starting, running, a stuck fetch loop, a broker cut off and
 * stopping.
 */
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { EndpointError } from 'prefork';
import { createBroker, type Broker } from 'prefork/broker';
import { cleanup, fixture, makeClient, makeWorker, silent, uniqueName } from '../helpers/worker.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

afterEach(cleanup);

/** One sample of the exposition: `name{labels} value`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1] as string] = pair[2] as string;
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of one series (0 when absent: a counter not yet incremented). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found?.value ?? 0;
}

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

async function probe(url: string): Promise<{ status: number; checks: Record<string, string> }> {
  const res = await fetch(url);
  const body = (await res.json()) as { checks: Record<string, string> };
  return { status: res.status, checks: body.checks };
}

describe('metrics', () => {
  it('count jobs by task and outcome, time them, and show the pool, the queues and the broker', async () => {
    const namespace = uniqueName('ns');
    const url = inject('redisUrl');
    const worker = makeWorker({ broker: url, namespace, metricsPort: 0, metricsHost: '127.0.0.1', lease: 1000 });
    await worker.start();
    const metricsUrl = worker.endpoints.metrics as string;
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);

    const before = await scrape(metricsUrl);
    expect(valueOf(before, 'prefork_jobs_total', { task: 'add', outcome: 'succeeded' })).toBe(0);
    expect(valueOf(before, 'prefork_pool_processes')).toBe(2);
    expect(valueOf(before, 'prefork_parent_resident_memory_bytes')).toBeGreaterThan(0);
    expect(valueOf(before, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);

    const client = makeClient(url, namespace);
    const adds = await Promise.all([1, 2, 3].map((n) => client.enqueue('add', [n, n])));
    await Promise.all(adds.map((h) => h.result()));
    const failing = await client.enqueue('flaky', [uniqueName('k'), 99]);
    await expect(failing.result()).rejects.toThrow(/flaky attempt 1/);
    // A task name from outside: counted, but under one label, whatever the name.
    const unknown = await client.enqueue('no such task <script>' as 'add', [1, 1]);
    await expect(unknown.result()).rejects.toThrow(/unknown task/i);

    const after = await scrape(metricsUrl);
    expect(valueOf(after, 'prefork_jobs_total', { task: 'add', outcome: 'succeeded' })).toBe(3);
    expect(valueOf(after, 'prefork_jobs_total', { task: 'flaky', outcome: 'failed' })).toBe(1);
    expect(valueOf(after, 'prefork_jobs_total', { task: '(unknown)', outcome: 'failed' })).toBe(1);
    expect(after.some((s) => s.labels.task?.includes('script'))).toBe(false);
    expect(valueOf(after, 'prefork_job_runtime_seconds_count', { task: 'add' })).toBe(3);
    expect(valueOf(after, 'prefork_job_queue_wait_seconds_count', { task: 'add' })).toBe(3);
    expect(valueOf(after, 'prefork_queue_jobs', { queue: 'default', state: 'waiting' })).toBe(0);
    expect(valueOf(after, 'prefork_queue_jobs', { queue: 'default', state: 'dead' })).toBe(2);
    expect(valueOf(after, 'prefork_reserved_requests')).toBe(0);
    expect(valueOf(after, 'prefork_children_resident_memory_bytes')).toBeGreaterThan(0);
    // Heartbeats every 400 ms with a 1 s lease: some have come back by now.
    await expect
      .poll(async () => valueOf(await scrape(metricsUrl), 'prefork_broker_roundtrip_seconds_count'))
      .toBeGreaterThan(0);
  });

  it('count a child that died under its job as a restart, by reason', async () => {
    const namespace = uniqueName('ns');
    const url = inject('redisUrl');
    const worker = makeWorker({ broker: url, namespace, metricsPort: 0, metricsHost: '127.0.0.1' });
    await worker.start();
    const client = makeClient(url, namespace);
    const crash = await client.enqueue('crash', [], { retries: 0 });
    await expect(crash.result()).rejects.toThrow();
    const samples = await scrape(worker.endpoints.metrics as string);
    expect(valueOf(samples, 'prefork_child_restarts_total', { reason: 'died' })).toBe(1);
    expect(valueOf(samples, 'prefork_jobs_total', { task: 'crash', outcome: 'failed' })).toBe(1);
  });

  it('refuse a port in use with an EndpointError naming it, before anything starts', async () => {
    const namespace = uniqueName('ns');
    const first = makeWorker({ broker: inject('redisUrl'), namespace, metricsPort: 0, metricsHost: '127.0.0.1' });
    await first.start();
    const port = Number(new URL(first.endpoints.metrics as string).port);
    const second = makeWorker({ broker: inject('redisUrl'), namespace, metricsPort: port, metricsHost: '127.0.0.1' });
    const err = await second.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EndpointError);
    expect((err as Error).message).toBe(`cannot serve /metrics on 127.0.0.1:${port}: the port is in use`);
    expect(second.pool.stats().processes).toHaveLength(0);
  });

  it('name an IPv6 address in use as a URL does, in brackets: ::1:port would read as one address', async () => {
    const namespace = uniqueName('ns');
    const first = makeWorker({ broker: inject('redisUrl'), namespace, healthPort: 0, healthHost: '::1' });
    await first.start();
    const port = Number(new URL(first.endpoints.health as string).port);
    const second = makeWorker({ broker: inject('redisUrl'), namespace, healthPort: port, healthHost: '::1' });
    const err = await second.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EndpointError);
    expect((err as Error).message).toBe(`cannot serve /healthz, /readyz on [::1]:${port}: the port is in use`);
    expect((err as EndpointError).address).toBe(`[::1]:${port}`);
  });

  it("leave no stopped Worker in memory: the process's metrics are made once, not held per node", () => {
    // prom-client's GC observer cannot be stopped and held its registry: with the node's gauges, the whole Worker.
    const options = { broker: inject('redisUrl'), namespace: uniqueName('ns'), app: fixture('tasks-light.mjs') };
    const run = (more: Record<string, unknown>) => {
      const r = spawnSync(
        process.execPath,
        ['--expose-gc', fixture('stopped-workers.mjs'), JSON.stringify({ ...options, concurrency: 1, ...more })],
        { encoding: 'utf8', timeout: 60_000 },
      );
      expect(r.stderr).toBe('');
      return JSON.parse(r.stdout) as unknown;
    };
    expect(run({})).toEqual(['collected', 'collected']);
    expect(run({ metricsPort: 0, metricsHost: '127.0.0.1' })).toEqual(['collected', 'collected']);
  });
});

describe('health probes', () => {
  it('follow the node: starting, running, cut off from Redis, back, stopping', async () => {
    const proxy = await TcpProxy.start(inject('redisUrl'));
    try {
      const worker = makeWorker({
        broker: proxy.url,
        namespace: uniqueName('ns'),
        lease: 1000,
        // One port serves both.
        metricsPort: 0,
        healthPort: 0,
        metricsHost: '127.0.0.1',
        healthHost: '127.0.0.1',
      });
      proxy.setMode('hold');
      const started = worker.start();
      await expect.poll(() => worker.endpoints.health).toBeDefined();
      const base = worker.endpoints.health as string;
      // Connecting: alive, not ready.
      expect((await probe(`${base}/healthz`)).status).toBe(200);
      expect(await probe(`${base}/readyz`)).toMatchObject({ status: 503, checks: { state: 'connecting' } });

      proxy.setMode('forward');
      await started;
      expect(await probe(`${base}/readyz`)).toMatchObject({ status: 200 });
      expect(await probe(`${base}/healthz`)).toMatchObject({ status: 200 });

      // Cut off: new connections refused, open ones cut.
      proxy.setMode('refuse');
      proxy.dropAll();
      await expect.poll(async () => (await probe(`${base}/readyz`)).status).toBe(503);
      const cut = await probe(`${base}/readyz`);
      expect(cut.checks.broker === 'ok' && cut.checks.lease === 'ok').toBe(false);
      // Alive all the same: restarting the node would not bring Redis back.
      expect((await probe(`${base}/healthz`)).status).toBe(200);

      proxy.setMode('forward');
      await expect.poll(async () => (await probe(`${base}/readyz`)).status).toBe(200);

      const stopping = worker.stop();
      expect(await probe(`${base}/readyz`)).toMatchObject({ status: 503, checks: { state: 'stopping' } });
      expect((await probe(`${base}/healthz`)).status).toBe(200);
      await stopping;
      await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    } finally {
      await proxy.close();
    }
  });

  it('say unhealthy when the fetch loop is stuck on a call that never returns', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const real = createBroker(url, { namespace, logger: silent, leaseMs: 1000 });
    let hang = false;
    let release: (() => void) | undefined;
    // A real Redis broker whose fetch, once `hang` is set, waits until released (as a call whose reply never comes).
    const broker = new Proxy(real, {
      get(target, prop) {
        if (prop === 'fetch')
          return async (...args: Parameters<Broker['fetch']>) => {
            if (hang) await new Promise<void>((resolve) => (release = resolve));
            return target.fetch(...args);
          };
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    try {
      const worker = makeWorker({ broker, healthPort: 0, healthHost: '127.0.0.1' });
      await worker.start();
      const base = worker.endpoints.health as string;
      expect((await probe(`${base}/healthz`)).status).toBe(200);

      hang = true;
      // Work wakes the blocked loop, more than its prefetch room: its next call is a fetch, which never returns.
      const client = makeClient(url, namespace);
      await client.enqueueMany(Array.from({ length: 200 }, (_, i) => ({ name: 'add', args: [i, 1] })));
      await expect.poll(async () => (await probe(`${base}/healthz`)).status).toBe(503);
      const stuck = await probe(`${base}/healthz`);
      expect(stuck.checks.consumer).toMatch(/^the fetch loop is stuck/);
      expect(stuck.checks.heartbeat).toBe('ok');
      expect(worker.health().live.ok).toBe(false);

      hang = false;
      release?.();
      await expect.poll(async () => (await probe(`${base}/healthz`)).status).toBe(200);
      await worker.stop();
    } finally {
      hang = false;
      release?.();
      await real.close();
    }
  });
});
