/**
 * The events stream, on both brokers with real worker children: a job's
 * whole life in order, a retry, a child that dies under its job, the pool's
 * and the node's own events, filters, and a stream reader that skips what is
 * not an event.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { pack } from 'msgpackr';
import { BrokerRefusedError, OptionError, type Client, type EventsOptions, type NodeEvent } from 'prefork';
import { createBroker } from 'prefork/broker';
import { EVENT_VALUE_MAX } from '../../dist/events/event-bounds.js';
import { EventBuffer, HELD_MAX } from '../../dist/events/event-buffer.js';
import {
  brokerFor,
  captureLog,
  cleanup,
  fixture,
  makeClient,
  makeWorker,
  silent,
  uniqueName,
} from '../helpers/worker.js';

afterEach(cleanup);

/** Events of the stream (from its start) until `done` says the last one came. */
async function collect(
  client: Client,
  done: (seen: NodeEvent[]) => boolean,
  filter: { task?: string; node?: string } = {},
): Promise<NodeEvent[]> {
  const seen: NodeEvent[] = [];
  const stop = new AbortController();
  for await (const e of client.events({ recent: 100_000, signal: stop.signal, ...filter })) {
    seen.push(e);
    if (done(seen)) stop.abort();
  }
  return seen;
}

const typesOf = (events: NodeEvent[], jobId: string): string[] =>
  events.filter((e) => e.jobId === jobId).map((e) => e.type);

describe.each(['memory', 'redis'] as const)('events on %s', (kind) => {
  const setup = (): { broker: string; namespace: string } => ({
    broker: brokerFor(kind, inject('redisUrl')),
    namespace: uniqueName('ns'),
  });

  it("tell a job's whole life in order, with its node, pid and runtime", async () => {
    const { broker, namespace } = setup();
    const worker = makeWorker({ broker, namespace, name: 'node-a' });
    await worker.start();
    const client = makeClient(broker, namespace);
    const handle = await client.enqueue('add', [2, 3]);
    expect(await handle.result()).toBe(5);
    const events = await collect(client, (seen) =>
      seen.some((e) => e.jobId === handle.id && e.type === 'job-succeeded'),
    );
    const mine = events.filter((e) => e.jobId === handle.id);
    expect(mine.map((e) => e.type)).toEqual(['job-received', 'job-started', 'job-succeeded']);
    expect(mine[0]).toMatchObject({ node: 'node-a', task: 'add', queue: 'default', attempt: 0 });
    expect(mine[1]?.pid).toBeGreaterThan(0);
    expect(mine[2]).toMatchObject({ pid: mine[1]?.pid });
    expect(mine[2]?.runtimeMs).toBeGreaterThanOrEqual(0);
    // The node came online, with its children up, before it took the job.
    const firstJob = events.indexOf(mine[0] as NodeEvent);
    const before = events.slice(0, firstJob).map((e) => e.type);
    expect(before).toContain('node-online');
    expect(before.filter((t) => t === 'process-up')).toHaveLength(2);
  });

  it('tell a retry with the next attempt time, then the failure', async () => {
    const { broker, namespace } = setup();
    const worker = makeWorker({ broker, namespace });
    await worker.start();
    const client = makeClient(broker, namespace);
    const handle = await client.enqueue('flaky', [uniqueName('k'), 99], {
      retries: 1,
      backoff: { type: 'fixed', delay: 10 },
    });
    await expect(handle.result()).rejects.toThrow(/flaky attempt 2/);
    const events = await collect(client, (seen) => seen.some((e) => e.jobId === handle.id && e.type === 'job-failed'));
    expect(typesOf(events, handle.id)).toEqual([
      'job-received',
      'job-started',
      'job-retried',
      'job-received',
      'job-started',
      'job-failed',
    ]);
    const retried = events.find((e) => e.jobId === handle.id && e.type === 'job-retried') as NodeEvent;
    expect(retried.error).toEqual({ name: 'Error', message: 'flaky attempt 1' });
    expect(retried.retryAt).toBeGreaterThanOrEqual(retried.at);
    const failed = events.find((e) => e.jobId === handle.id && e.type === 'job-failed') as NodeEvent;
    expect(failed).toMatchObject({ attempt: 1, error: { message: 'flaky attempt 2' } });
  });

  it('tell a child that died under its job: job-lost with the signal, process-down, a new process-up', async () => {
    const { broker, namespace } = setup();
    const worker = makeWorker({ broker, namespace, concurrency: 1 });
    await worker.start();
    const client = makeClient(broker, namespace);
    const handle = await client.enqueue('crash', [], { retries: 0 });
    await expect(handle.result()).rejects.toThrow();
    const events = await collect(client, (seen) => seen.filter((e) => e.type === 'process-up').length >= 2);
    expect(typesOf(events, handle.id)).toEqual(['job-received', 'job-started', 'job-lost', 'job-failed']);
    const lost = events.find((e) => e.type === 'job-lost') as NodeEvent;
    expect(lost).toMatchObject({ signal: 'SIGKILL', exitCode: null });
    const down = events.find((e) => e.type === 'process-down') as NodeEvent;
    expect(down).toMatchObject({ pid: lost.pid, reason: 'died', signal: 'SIGKILL' });
    expect(events.indexOf(down)).toBeLessThan(events.findLastIndex((e) => e.type === 'process-up'));
  });

  it('tell a node going offline last, and filter by task and node', async () => {
    const { broker, namespace } = setup();
    const a = makeWorker({ broker, namespace, name: 'node-a', concurrency: 1 });
    await a.start();
    const client = makeClient(broker, namespace);
    const adds = await Promise.all([1, 2].map((n) => client.enqueue('add', [n, n])));
    const echo = await client.enqueue('echo', ['x']);
    await Promise.all([...adds, echo].map((h) => h.result()));
    await a.stop();

    const all = await collect(client, (seen) => seen.some((e) => e.type === 'node-offline'));
    expect(all.at(-1)).toMatchObject({ type: 'node-offline', node: 'node-a' });
    expect(all.filter((e) => e.type === 'process-down').every((e) => e.reason === 'retired')).toBe(true);

    const stop = new AbortController();
    const onlyAdd: NodeEvent[] = [];
    for await (const e of client.events({ recent: 100_000, follow: false, task: 'add', signal: stop.signal }))
      onlyAdd.push(e);
    expect(onlyAdd.length).toBe(6);
    expect(onlyAdd.every((e) => e.task === 'add')).toBe(true);
    const none: NodeEvent[] = [];
    for await (const e of client.events({ recent: 100_000, follow: false, node: 'node-b' })) none.push(e);
    expect(none).toEqual([]);
  });

  it('tell a running job revoked with terminate as job-revoked, not as a success or a loss', async () => {
    const { broker, namespace } = setup();
    const worker = makeWorker({ broker, namespace, concurrency: 1 });
    await worker.start();
    const client = makeClient(broker, namespace);
    const handle = await client.enqueue('waitForAbort', [60_000]);
    await collect(client, (seen) => seen.some((e) => e.jobId === handle.id && e.type === 'job-started'));
    await handle.revoke({ terminate: true, grace: '10s' });
    const events = await collect(client, (seen) => seen.some((e) => e.jobId === handle.id && e.type === 'job-revoked'));
    expect(typesOf(events, handle.id)).toEqual(['job-received', 'job-started', 'job-revoked']);
  });

  it('tell the progress a task reports, between its start and its outcome', async () => {
    const { broker, namespace } = setup();
    const worker = makeWorker({ broker, namespace, concurrency: 1, app: fixture('tasks-inspect.mjs') });
    await worker.start();
    const client = makeClient(broker, namespace);
    const gate = join(mkdtempSync(join(tmpdir(), 'prefork-events-')), 'gate');
    const handle = await client.enqueue('progressThenHold' as 'add', [gate, { done: 1, of: 2 }] as never);
    const seen = await collect(client, (s) => s.some((e) => e.jobId === handle.id && e.type === 'job-progress'));
    expect(seen.find((e) => e.type === 'job-progress')?.progress).toEqual({ done: 1, of: 2 });
    writeFileSync(gate, '');
    await handle.result();
    const events = await collect(client, (s) => s.some((e) => e.jobId === handle.id && e.type === 'job-succeeded'));
    expect(typesOf(events, handle.id)).toEqual(['job-received', 'job-started', 'job-progress', 'job-succeeded']);
  });

  /** A job failing with a 200,000-character message, retried once, and its two events that carry the error. */
  async function failHuge(ignoreResult?: boolean) {
    const { broker, namespace } = setup();
    const worker = makeWorker({ broker, namespace, concurrency: 1 });
    await worker.start();
    const client = makeClient(broker, namespace);
    const handle = await client.enqueue('boom' as 'add', ['y'.repeat(200_000)] as never, {
      retries: 1,
      backoff: { type: 'fixed', delay: 0 },
      ...(ignoreResult === undefined ? {} : { ignoreResult }),
    });
    const events = await collect(client, (seen) => seen.some((e) => e.jobId === handle.id && e.type === 'job-failed'));
    const told = events.filter((e) => e.jobId === handle.id && e.error !== undefined);
    expect(told.map((e) => e.type)).toEqual(['job-retried', 'job-failed']);
    return { broker, namespace, worker, handle, told };
  }

  it('cut a huge error message to EVENT_VALUE_MAX, marked, while the stored result keeps it whole', async () => {
    const { handle, told } = await failHuge();
    const err = (await handle.result().catch((e: unknown) => e)) as Error;
    // The stored result keeps the whole message.
    expect(err.message).toBe(`boom ${'y'.repeat(200_000)}`);
    for (const e of told) {
      const message = e.error?.message ?? '';
      expect(message.startsWith(`boom ${'y'.repeat(EVENT_VALUE_MAX - 5)}… [message cut: 200005 characters`)).toBe(true);
      expect(message).toContain(`prefork result ${handle.id}]`);
      expect(message.length).toBeLessThan(EVENT_VALUE_MAX + 200);
    }
  });

  it('point a cut message to where it is whole: with results ignored, the dead set, or nowhere', async () => {
    const { broker, namespace, worker, told } = await failHuge(true);
    const [retried, failed] = told.map((e) => e.error?.message ?? '');
    // No RETRY record is stored with results ignored: the attempt's message is kept nowhere.
    expect(retried).toMatch(/… \[message cut: 200005 characters\]$/);
    expect(failed).toMatch(
      /… \[message cut: 200005 characters; whole in the dead set's reason: prefork dead list --json\]$/,
    );
    await worker.stop();
    const b = createBroker(broker, { namespace, logger: silent });
    try {
      const dead = await b.listDead(told[1]?.queue ?? '', 10);
      expect(dead.map((d) => d.reason)).toEqual([`retries spent (1): boom ${'y'.repeat(200_000)}`]);
    } finally {
      await b.close();
    }
  });

  it('cut a huge progress value, a string or any other, marked, while the job keeps it whole', async () => {
    const { broker, namespace } = setup();
    const worker = makeWorker({ broker, namespace, concurrency: 4, app: fixture('tasks-inspect.mjs') });
    await worker.start();
    const client = makeClient(broker, namespace);
    const dir = mkdtempSync(join(tmpdir(), 'prefork-events-'));
    const text = 'p'.repeat(50_000);
    const rows = Array.from({ length: 2_000 }, (_, i) => ({ row: i }));
    const small = await client.enqueue('progressThenHold' as 'add', [join(dir, 'a'), { done: 1 }] as never);
    const long = await client.enqueue('progressThenHold' as 'add', [join(dir, 'b'), text] as never);
    const wide = await client.enqueue('progressThenHold' as 'add', [join(dir, 'c'), rows] as never);
    const quiet = await client.enqueue('progressThenHold' as 'add', [join(dir, 'd'), text] as never, {
      ignoreResult: true,
    });
    const ids = [small.id, long.id, wide.id, quiet.id];
    const seen = await collect(client, (s) =>
      ids.every((id) => s.some((e) => e.jobId === id && e.type === 'job-progress')),
    );
    const progressOf = (id: string): unknown => seen.find((e) => e.jobId === id && e.type === 'job-progress')?.progress;
    expect(progressOf(small.id)).toEqual({ done: 1 });
    expect(progressOf(long.id)).toBe(
      `${'p'.repeat(EVENT_VALUE_MAX)}… [progress cut: 50000 characters; whole in the job's result: prefork result ${long.id}]`,
    );
    expect(progressOf(wide.id)).toBe(
      `[progress cut: larger than ${EVENT_VALUE_MAX} bytes; whole in the job's result: prefork result ${wide.id}]`,
    );
    // Results ignored: the job keeps no progress, so the marker points nowhere.
    expect(progressOf(quiet.id)).toBe(`${'p'.repeat(EVENT_VALUE_MAX)}… [progress cut: 50000 characters]`);
    // The job's own record keeps each whole.
    await expect.poll(async () => (await long.progress())?.value).toBe(text);
    await expect.poll(async () => (await wide.progress())?.value).toEqual(rows);
    for (const gate of ['a', 'b', 'c', 'd']) writeFileSync(join(dir, gate), '');
    await Promise.all([small.result(), long.result(), wide.result()]);
  });

  it('refuse bad options with OptionError naming them', async () => {
    const { broker, namespace } = setup();
    const client = makeClient(broker, namespace);
    await expect(client.events({ recent: -1 }).next()).rejects.toThrow(OptionError);
    await expect(client.events({ types: ['job-done' as 'job-failed'] }).next()).rejects.toThrow(/invalid option types/);
  });

  it('refuse options that are no object, an unknown one (a misspelt filter), or a follow or signal of the wrong type', async () => {
    const { broker, namespace } = setup();
    const client = makeClient(broker, namespace);
    const refused = (options: unknown) => client.events(options as EventsOptions).next();
    await expect(refused({ tasks: 'resize', follow: false })).rejects.toThrow(
      'invalid option tasks: "resize" (expected a known events() option: recent, follow, signal, task, node, types (unknown option "tasks"))',
    );
    await expect(refused({ follow: 'false' })).rejects.toThrow(
      'invalid option follow: "false" (expected true or false)',
    );
    await expect(refused({ signal: 'stop' })).rejects.toThrow(
      'invalid option signal: "stop" (expected an AbortSignal)',
    );
    for (const options of [null, 'resize', ['resize']])
      await expect(refused(options), JSON.stringify(options)).rejects.toThrow(
        /^invalid option options: .* \(expected an object: \{ recent\?, follow\?, signal\?, task\?, node\?, types\? \}\)$/,
      );
    for (const options of [{ tasks: 'x' }, { follow: 1 }, { signal: {} }, null])
      await expect(refused(options)).rejects.toBeInstanceOf(OptionError);
  });

  it('write none from a node with events off', async () => {
    const { broker, namespace } = setup();
    const worker = makeWorker({ broker, namespace, events: false });
    await worker.start();
    const client = makeClient(broker, namespace);
    await (await client.enqueue('add', [1, 1])).result();
    await worker.stop();
    const seen: NodeEvent[] = [];
    for await (const e of client.events({ recent: 100_000, follow: false })) seen.push(e);
    expect(seen).toEqual([]);
  });
});

describe('the events stream in Redis', () => {
  it('a follower whose first read fails tries again, as later reads do, and then follows', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const { log, lines } = captureLog();
    const client = makeClient(url, namespace, { logger: log });
    const raw = new Redis(url);
    const key = `{${namespace}}:events`;
    try {
      // The stream's key holds something else (a stray SET): every read of it fails until it is gone.
      await raw.set(key, 'not a stream');
      const stop = new AbortController();
      const seen: NodeEvent[] = [];
      const following = (async () => {
        for await (const e of client.events({ recent: 10, signal: stop.signal })) {
          seen.push(e);
          stop.abort();
        }
      })();
      await expect.poll(() => lines.some((l) => l.msg === 'reading the events failed; retrying')).toBe(true);
      await raw.del(key);
      await raw.xadd(key, '*', 'e', pack([{ type: 'node-online', at: 1, node: 'back' }]));
      await following;
      expect(seen).toEqual([{ type: 'node-online', at: 1, node: 'back' }]);
    } finally {
      raw.disconnect();
    }
  });

  it('a stream key another program wrote over is named when reading or writing the events is refused', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const { log, lines } = captureLog();
    const broker = createBroker(url, { namespace, logger: silent });
    const client = makeClient(url, namespace, { logger: log });
    const raw = new Redis(url);
    const key = `{${namespace}}:events`;
    const named = `WRONGTYPE Operation against a key holding the wrong kind of value (${key} is a string, not a stream)`;
    try {
      await broker.connect();
      await raw.set(key, 'not a stream');
      const refused = async (what: string, call: Promise<unknown>) => {
        const err = await call.catch((e: unknown) => e);
        expect(err, what).toBeInstanceOf(BrokerRefusedError);
        expect((err as Error).message, what).toBe(`Redis refused ${what}: ${named}`);
      };
      await refused('the read of the events', client.events({ recent: 5, follow: false }).next());
      await refused('the read of the events', broker.recentEvents(0));
      await refused('the read of the events', broker.readEvents('0-0', 0));
      await refused('the read of the events', broker.readEvents('0-0', 1_000));
      await refused(
        'the write of the events',
        broker.publishEvents({ node: 'a', items: [{ type: 'node-online', at: 1, node: 'a' }] }),
      );
      // A follower logs it, naming the key, and tries again (the key may be mended).
      const stop = new AbortController();
      const following = (async () => {
        for await (const _ of client.events({ signal: stop.signal })) break;
      })();
      await expect
        .poll(() => lines.find((l) => l.msg === 'reading the events failed; retrying'))
        .toMatchObject({
          // pino adds the cause's message after it.
          err: {
            type: 'BrokerRefusedError',
            message: expect.stringContaining(`Redis refused the read of the events: ${named}`) as unknown,
          },
        });
      stop.abort();
      await following;
    } finally {
      raw.disconnect();
      await broker.close();
    }
  });

  it("a node that drops events it cannot write says why: the stream's key written over is named", async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const { log, lines } = captureLog();
    const broker = createBroker(url, { namespace, logger: silent });
    const raw = new Redis(url);
    const buffer = new EventBuffer('n', (batch) => broker.publishEvents(batch), log);
    try {
      await broker.connect();
      await raw.set(`{${namespace}}:events`, 'not a stream');
      buffer.push({ type: 'node-online', at: 1, node: 'n' });
      await buffer.flush();
      for (let i = 0; i < HELD_MAX; i++) buffer.push({ type: 'process-up', at: 2, node: 'n', pid: i });
      expect(lines.filter((l) => (l.level as number) >= 40)).toMatchObject([
        {
          msg: `events are not reaching the broker; dropping the oldest: Redis refused the write of the events: WRONGTYPE Operation against a key holding the wrong kind of value ({${namespace}}:events is a string, not a stream)`,
          err: { type: 'BrokerRefusedError' },
        },
      ]);
    } finally {
      buffer.close();
      raw.disconnect();
      await broker.close();
    }
  });

  it('recentEvents() reads each entry once: an entry that is not one is logged once, not once per pass', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const { log, lines } = captureLog();
    const broker = createBroker(url, { namespace, logger: log });
    const raw = new Redis(url);
    try {
      await broker.connect();
      const key = `{${namespace}}:events`;
      await broker.publishEvents({ node: 'a', items: [{ type: 'node-online', at: 1, node: 'a' }] });
      const bad = await raw.xadd(key, '*', 'other', 'field');
      const half = await raw.xadd(key, '*', 'e', pack([{ type: 'node-offline', at: 2, node: 'a' }, { at: 3 }]));
      const page = await broker.recentEvents(100);
      expect(page.events.map((e) => e.type)).toEqual(['node-online', 'node-offline']);
      expect(lines.filter((l) => l.entry === bad)).toHaveLength(1);
      expect(lines.filter((l) => l.entry === half)).toHaveLength(1);
    } finally {
      raw.disconnect();
      await broker.close();
    }
  });

  it('skips entries that are not events, and stays capped near eventsMaxLen', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueName('ns');
    const broker = createBroker(url, { namespace, logger: silent, eventsMaxLen: 5 });
    const raw = new Redis(url);
    try {
      await broker.connect();
      const key = `{${namespace}}:events`;
      await broker.publishEvents({ node: 'a', items: [{ type: 'node-online', at: 1, node: 'a' }] });
      await raw.xadd(key, '*', 'e', 'not msgpack of events');
      await raw.xadd(key, '*', 'other', 'field');
      await raw.xadd(key, '*', 'e', pack([{ type: 'job-unheard-of', at: 2, node: 'a' }, { at: 3 }]));
      await broker.publishEvents({ node: 'a', items: [{ type: 'node-offline', at: 4, node: 'a' }] });
      const page = await broker.recentEvents(100);
      expect(page.events.map((e) => e.type)).toEqual(['node-online', 'node-offline']);
      const after = await broker.readEvents('0-0', 0);
      expect(after.events.map((e) => e.type)).toEqual(['node-online', 'node-offline']);
      expect(after.position).toBe(page.position);

      for (let i = 0; i < 500; i++)
        await broker.publishEvents({ node: 'b', items: [{ type: 'node-online', at: i, node: 'b' }] });
      // MAXLEN ~ trims whole nodes of the stream: near the cap, never the 505 written.
      expect(await raw.xlen(key)).toBeLessThan(200);
    } finally {
      raw.disconnect();
      await broker.close();
    }
  });
});
