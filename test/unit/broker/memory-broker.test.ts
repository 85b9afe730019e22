import { randomUUID } from 'node:crypto';
import { pack } from 'msgpackr';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createBroker } from '../../../dist/broker/index.js';
import { MemoryBroker } from '../../../dist/broker/memory/memory-broker.js';
import type { NewJob } from '../../../dist/broker/types.js';
import { BrokerRefusedError, OptionError } from '../../../dist/errors.js';
import { EVENTS_PER_WRITE, EventBuffer } from '../../../dist/events/event-buffer.js';

const silent = pino({ level: 'silent' });
const open: MemoryBroker[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((b) => b.close()));
});

function broker(url: string, namespace?: string): MemoryBroker {
  const b = MemoryBroker.open(url, { logger: silent, ...(namespace === undefined ? {} : { namespace }) });
  open.push(b);
  return b;
}

function job(id: string, extra: Partial<NewJob> = {}): NewJob {
  return {
    id,
    task: 't',
    queue: 'q',
    payload: new Uint8Array([0x90]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: 0,
    ...extra,
  };
}

async function node(b: MemoryBroker, id = 'n1'): Promise<string> {
  await b.register({ id, name: id, host: 'h', pid: 1, queues: ['q'], concurrency: '1', startedAt: 0 });
  return id;
}

describe('MemoryBroker handles', () => {
  it('handles on one name and namespace share a state; another name or namespace is another broker', async () => {
    const name = `memory://u-${randomUUID()}`;
    const a = broker(name);
    await a.enqueue([job('x')]);
    expect((await broker(name).counts(['q']))[0]!.waiting).toBe(1);
    expect((await broker(`${name}-other`).counts(['q']))[0]!.waiting).toBe(0);
    expect((await broker(name, 'elsewhere').counts(['q']))[0]!.waiting).toBe(0);
  });

  it('a "/" in the namespace or the name does not make two pairs one broker', async () => {
    // Namespace "a/b" with name "c" was the key "a/b/c", as namespace "a" with name "b/c".
    const id = randomUUID();
    await broker(`memory://c-${id}`, 'a/b').enqueue([job('x')]);
    expect((await broker(`memory://b/c-${id}`, 'a').counts(['q']))[0]!.waiting).toBe(0);
    expect((await broker(`memory://c-${id}`, 'a/b').counts(['q']))[0]!.waiting).toBe(1);
  });

  it('memory:// alone names the default broker', () => {
    expect(broker('memory://').displayUrl).toBe('memory://default');
  });

  it('the last handle to close drops the state', async () => {
    const name = `memory://u-${randomUUID()}`;
    const a = MemoryBroker.open(name, { logger: silent });
    await a.enqueue([job('x')]);
    await a.close();
    expect((await broker(name).counts(['q']))[0]!.waiting).toBe(0);
  });

  it('closing a handle ends its blocked waits with nothing', async () => {
    const b = MemoryBroker.open(`memory://u-${randomUUID()}`, { logger: silent });
    const me = await node(b);
    const work = b.waitForWork(me, ['q'], 60_000, new AbortController().signal, 1);
    const results = b.waitForResults('c', 60_000);
    await b.close();
    expect((await work).deliveries).toEqual([]);
    expect((await results).records).toEqual([]);
  });

  it('rejects bad options and URLs with OptionError', () => {
    expect(() => MemoryBroker.open('memory://x', { leaseMs: 0 })).toThrow(OptionError);
    expect(() => MemoryBroker.open('redis://x')).toThrow(OptionError);
    expect(() => createBroker('http://localhost')).toThrow(OptionError);
    expect(() => createBroker('http://localhost')).toThrow(/redis:\/\/, rediss:\/\/ or memory:\/\//);
    expect(createBroker(`memory://u-${randomUUID()}`, { logger: silent })).toBeInstanceOf(MemoryBroker);
  });
});

describe('MemoryBroker copies', () => {
  it('keeps payload bytes in their own exact-size buffer (not the slab a msgpackr output lives in)', async () => {
    const b = broker(`memory://u-${randomUUID()}`);
    const me = await node(b);
    const payload = pack(['arg', 1]);
    await b.enqueue([job('x', { payload })]);
    const [d] = (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })).deliveries;
    expect(Array.from(d!.job.payload)).toEqual(Array.from(payload));
    expect(d!.job.payload.buffer.byteLength).toBe(payload.length);
  });

  it('a consumer mutating its delivery changes nothing stored', async () => {
    const b = broker(`memory://u-${randomUUID()}`);
    const me = await node(b);
    await b.enqueue([job('x', { options: { retries: 1 } })]);
    const [d] = (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })).deliveries;
    d!.job.options.retries = 50;
    d!.job.payload[0] = 0xff;
    await b.settle([{ kind: 'giveBack', delivery: d! }]);
    const [again] = (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })).deliveries;
    expect(again!.job.options.retries).toBe(1);
    expect(Array.from(again!.job.payload)).toEqual([0x90]);
  });
});

describe('MemoryBroker refusals', () => {
  it('a settlement it cannot store rejects with BrokerRefusedError (sent again it would fail the same way)', async () => {
    const b = broker(`memory://u-${randomUUID()}`);
    const me = await node(b);
    await b.enqueue([job('x')]);
    const [d] = (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })).deliveries;
    // A result value that cannot be copied (a function): the store refuses it.
    const result = { id: 'x', task: 't', queue: 'q', state: 'SUCCESS' as const, retries: 0, value: () => 1 };
    const refused = await b.settle([{ kind: 'ack', delivery: d!, result }]).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(BrokerRefusedError);
    expect(refused).toMatchObject({ code: 'PREFORK_BROKER_REFUSED' });
  });
});

describe('MemoryBroker fencing', () => {
  it('a fenced node blocked in waitForWork reserves nothing, even once a delayed job falls due', async () => {
    const b = broker(`memory://u-${randomUUID()}`);
    await b.enqueue([job('later', { delay: 30 })]);
    // Never registered: fenced.
    const reply = await b.waitForWork('ghost', ['q'], 200, new AbortController().signal, 1);
    expect(reply.deliveries).toEqual([]);
    expect((await b.counts(['q']))[0]).toMatchObject({ reserved: 0 });
  });
});

describe('MemoryBroker long delays', () => {
  it('a node waiting on a queue whose next job is weeks away sleeps, not spins (no timer overflow)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w.name);
    };
    process.on('warning', onWarning);
    try {
      const b = broker(`memory://u-${randomUUID()}`);
      const me = await node(b);
      await b.enqueue([job('far', { delay: 30 * 86_400_000 })]);
      const reply = await b.waitForWork(me, ['q'], 100, new AbortController().signal, 1);
      expect(reply.deliveries).toEqual([]);
      expect(reply.nextDueAt).toBeGreaterThan(Date.now() + 29 * 86_400_000);
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe("memory://'s writes carry a node's events", () => {
  it('every event held rides a fetch, in order, an entry per EVENTS_PER_WRITE', async () => {
    const b = broker(`memory://${randomUUID()}`);
    const me = await node(b);
    const events = new EventBuffer(me, () => Promise.reject(new Error('no write of their own here')), silent);
    const n = EVENTS_PER_WRITE * 2 + 3;
    for (let i = 0; i < n; i++) events.push({ type: 'job-received', at: i, node: me, jobId: `j${i}` });
    b.carryEvents(events);
    await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] });
    const page = await b.recentEvents(n);
    expect(page.events.map((e) => e.jobId)).toEqual(Array.from({ length: n }, (_, i) => `j${i}`));
    expect(page.position).toBe('3');
    expect(events.take()).toEqual([]);
    events.close();
  });
});
