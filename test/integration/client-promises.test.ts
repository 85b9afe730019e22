import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client, PreforkError, ResultTimeoutError } from 'prefork';
import { createBroker, type Broker } from 'prefork/broker';
import { countsOf, silent } from '../helpers/worker.js';
import { redisUrl, Scope } from './redis-helpers.js';

/** What the Client's documentation promises, through its public API. */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function memoryClient(): Client {
  const c = new Client({ broker: `memory://client-promises-${randomUUID()}`, logger: silent });
  cleanups.push(() => c.close());
  return c;
}

describe('Client: result({ timeout })', () => {
  it.each([50, '50ms'])('rejects with ResultTimeoutError naming the job when no result comes within %j', async (t) => {
    const c = memoryClient();
    const job = await c.enqueue('t');
    const err = await job.result({ timeout: t }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResultTimeoutError);
    expect(err).toMatchObject({ code: 'PREFORK_RESULT_TIMEOUT', jobId: job.id });
    expect((err as Error).message).toBe(`no result for job ${job.id} within 50 ms`);
  });
});

describe('Client.close()', () => {
  it('rejects every waiter with PREFORK_CLIENT_CLOSED naming its job, and later calls too', async () => {
    const c = memoryClient();
    const [a, b] = await c.enqueueMany([{ name: 't' }, { name: 't' }]);
    // Called just before close(): the waiters are not even registered yet.
    const waiting = [a!.result(), a!.result(), b!.result({ timeout: '1m' })];
    for (const w of waiting) w.catch(() => undefined);
    await c.close();
    for (const [w, id] of [
      [waiting[0], a!.id],
      [waiting[1], a!.id],
      [waiting[2], b!.id],
    ] as const) {
      const err = await w!.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PreforkError);
      expect(err).toMatchObject({ code: 'PREFORK_CLIENT_CLOSED' });
      expect((err as Error).message).toContain(id);
    }
    await expect(a!.result()).rejects.toMatchObject({ code: 'PREFORK_CLIENT_CLOSED' });
    await expect(c.enqueue('t')).rejects.toMatchObject({ code: 'PREFORK_CLIENT_CLOSED' });
  });

  it('rejects a waiter that was already waiting', async () => {
    const c = memoryClient();
    const job = await c.enqueue('t');
    const waiting = job.result();
    waiting.catch(() => undefined);
    // Let it register and block on the reply list.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await c.close();
    await expect(waiting).rejects.toMatchObject({ code: 'PREFORK_CLIENT_CLOSED' });
  });

  it.each(['memory', 'redis'] as const)(
    'on a broker it shares (%s), ends its blocking read at once instead of waiting out the slice',
    async (kind) => {
      let broker: Broker;
      if (kind === 'memory') {
        broker = createBroker(`memory://client-close-${randomUUID()}`, { logger: silent });
        await broker.connect();
        cleanups.push(() => broker.close());
      } else {
        const scope = new Scope();
        cleanups.push(() => scope.cleanup());
        broker = await scope.broker();
      }
      const c = new Client({ broker, logger: silent });
      const job = await c.enqueue('t');
      const read = broker.waitForResults.bind(broker);
      let reading!: (signal: AbortSignal | undefined) => void;
      const blocked = new Promise<AbortSignal | undefined>((resolve) => (reading = resolve));
      broker.waitForResults = (clientId, timeoutMs, signal) => {
        reading(signal);
        return read(clientId, timeoutMs, signal);
      };
      const waiting = job.result();
      waiting.catch(() => undefined);
      const signal = await blocked;
      expect(signal?.aborted).toBe(false);
      await c.close();
      // The read was told to end (the broker's contract: it returns at once), not left to run out its slice.
      expect(signal?.aborted).toBe(true);
      await expect(waiting).rejects.toMatchObject({ code: 'PREFORK_CLIENT_CLOSED' });
    },
  );
});

describe('Client: the broker by default', () => {
  const saved = process.env.PREFORK_BROKER_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.PREFORK_BROKER_URL;
    else process.env.PREFORK_BROKER_URL = saved;
  });

  it('is $PREFORK_BROKER_URL when set', async () => {
    const url = `memory://from-env-${randomUUID()}`;
    process.env.PREFORK_BROKER_URL = url;
    const c = new Client({ logger: silent });
    cleanups.push(() => c.close());
    expect(c.broker.displayUrl).toBe(url);
    const job = await c.enqueue('t');
    expect((await c.broker.getResult(job.id)) ?? 'stored nowhere else').toBe('stored nowhere else');
    const other = new Client({ broker: url, logger: silent });
    cleanups.push(() => other.close());
    expect(await countsOf(other, ['default'])).toMatchObject([{ waiting: 1 }]);
  });

  it('is redis://127.0.0.1:6379 when $PREFORK_BROKER_URL is not set', () => {
    delete process.env.PREFORK_BROKER_URL;
    const c = new Client({ logger: silent });
    cleanups.push(() => c.close());
    expect(c.broker.displayUrl).toBe('redis://127.0.0.1:6379');
  });
});

describe.each(['memory', 'redis'] as const)('Client on %s: a valid eta', (kind) => {
  async function setup(): Promise<{
    c: Client;
    take: () => Promise<string[]>;
  }> {
    let c: Client;
    if (kind === 'redis') {
      const scope = new Scope();
      cleanups.push(() => scope.cleanup());
      c = new Client({ broker: redisUrl(), namespace: scope.ns, logger: silent });
    } else {
      c = new Client({ broker: `memory://client-eta-${randomUUID()}`, logger: silent });
    }
    cleanups.push(() => c.close());
    await c.broker.connect();
    const worker = c.broker as unknown as import('prefork/broker').Broker;
    await worker.register({
      id: 'n',
      name: 'n@test',
      host: 'test',
      pid: process.pid,
      queues: ['default'],
      concurrency: '1',
      startedAt: Date.now(),
    });
    const take = async (): Promise<string[]> =>
      (
        await worker.fetch({ nodeId: 'n', plan: [{ queue: 'default', quota: 10 }], count: 10, settle: [] })
      ).deliveries.map((d) => d.job.id);
    return { c, take };
  }

  it('a Date or epoch ms in the future waits in the delayed set, and runs once due', async () => {
    const { c, take } = await setup();
    const later = await c.enqueue('t', [], { eta: new Date(Date.now() + 3_600_000) });
    const soon = await c.enqueue('t', [], { eta: Date.now() + 300 });
    expect(await countsOf(c, ['default'])).toMatchObject([{ waiting: 0, delayed: 2 }]);
    expect(await take()).toEqual([]);
    await vi.waitFor(async () => expect(await take()).toEqual([soon.id]), { timeout: 10_000, interval: 100 });
    expect(await countsOf(c, ['default'])).toMatchObject([{ delayed: 1 }]);
    expect(later.id).not.toBe(soon.id);
  });

  it('an eta in the past runs now', async () => {
    const { c, take } = await setup();
    const job = await c.enqueue('t', [], { eta: new Date(Date.now() - 60_000) });
    expect(await take()).toEqual([job.id]);
  });
});
