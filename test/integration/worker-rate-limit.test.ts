/**
 * Cluster-wide rate limits, end to end: real worker nodes (each its own
 * process, with its own children) on the test Redis. Start times come from
 * a ledger the tasks append to; the assertions count starts per one-second
 * window (a tolerance of one for clock edges), never how long anything took.
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { OptionError, defineTasks, type NodeEvent } from 'prefork';
import {
  brokerFor,
  cleanup,
  countsOf,
  fixture,
  makeClient,
  makeWorker,
  newLedger,
  startNode,
  uniqueName,
} from '../helpers/worker.js';
import { readFileSync } from 'node:fs';

afterEach(cleanup);

const TASKS = fixture('tasks-rate-limited.mjs');

/** Starts recorded in the ledger: job id, task, epoch ms. */
function starts(ledger: string): { id: string; task: string; at: number }[] {
  let text: string;
  try {
    text = readFileSync(ledger, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id = '', task = '', at = '0'] = line.split(' ');
      return { id, task, at: Number(at) };
    });
}

/** The most starts any one-second window [t, t + 1000) holds (windows begin at a start). */
function busiestSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0; i < sorted.length; i++) {
    let n = 0;
    while (i + n < sorted.length && sorted[i + n]! < sorted[i]! + 1000) n++;
    most = Math.max(most, n);
  }
  return most;
}

describe('rate limits across the cluster', () => {
  it('2/s with two nodes and 20 jobs: no second holds more than 2 starts (+1), and another task is not held back', async () => {
    const redis = inject('redisUrl');
    const namespace = uniqueName('rl');
    const ledger = newLedger();
    const options = { app: TASKS, broker: redis, namespace, concurrency: 2 };
    await Promise.all([startNode(options, ledger), startNode(options, ledger)]);
    const client = makeClient(redis, namespace);
    const limited = await Promise.all(Array.from({ length: 20 }, () => client.enqueue('limited', [])));
    const other = await client.enqueue('plain', []);
    // Jobs over the limit wait in Redis's delayed set for their turn, not in a node.
    await expect
      .poll(async () => (await countsOf(client, ['default']))[0]!.delayed, { timeout: 20_000 })
      .toBeGreaterThanOrEqual(10);
    await other.result({ timeout: 30_000 });
    await Promise.all(limited.map((h) => h.result({ timeout: 60_000 })));

    const all = starts(ledger);
    const limitedStarts = all.filter((s) => s.task === 'limited');
    // Each job started once.
    expect(new Set(limitedStarts.map((s) => s.id)).size).toBe(20);
    expect(limitedStarts).toHaveLength(20);
    expect(busiestSecond(limitedStarts.map((s) => s.at))).toBeLessThanOrEqual(3);
    // The job of another task, enqueued after the 20, started before the limited backlog was through.
    const plainStart = all.find((s) => s.task === 'plain')!.at;
    expect(plainStart).toBeLessThan(Math.max(...limitedStarts.map((s) => s.at)));
  });

  it.each(['memory', 'redis'] as const)(
    'per-job enqueue option on %s: jobs of a task without a limit are spaced by their own rateLimit',
    async (kind) => {
      const broker = brokerFor(kind, inject('redisUrl'));
      const namespace = uniqueName('rlj');
      const ledger = newLedger();
      const worker = makeWorker({ app: TASKS, broker, namespace, ledger, concurrency: 2 });
      await worker.start();
      const client = makeClient(broker, namespace);
      const spaced = await Promise.all(
        Array.from({ length: 6 }, () => client.enqueue('plain', [], { rateLimit: '2/s' })),
      );
      const free = await client.enqueue('plain', []);
      await free.result({ timeout: 30_000 });
      await Promise.all(spaced.map((h) => h.result({ timeout: 60_000 })));
      const all = starts(ledger);
      const spacedIds = new Set(spaced.map((h) => h.id));
      const spacedStarts = all.filter((s) => spacedIds.has(s.id)).map((s) => s.at);
      expect(spacedStarts).toHaveLength(6);
      expect(busiestSecond(spacedStarts)).toBeLessThanOrEqual(3);
      expect(all.find((s) => s.id === free.id)!.at).toBeLessThan(Math.max(...spacedStarts));
      // Waiting for a turn spends no retry: deferred, never retried.
      expect(worker.stats().consumer.deferred).toBeGreaterThan(0);
      expect(worker.stats().consumer.retried).toBe(0);
    },
  );

  it.each(['memory', 'redis'] as const)(
    'on %s, state() of a job waiting for its turn says PENDING until when, spends no retry, and an event tells it',
    async (kind) => {
      const broker = brokerFor(kind, inject('redisUrl'));
      const namespace = uniqueName('rls');
      const worker = makeWorker({ app: TASKS, broker, namespace, ledger: newLedger(), concurrency: 2 });
      await worker.start();
      const client = makeClient(broker, namespace);
      const before = Date.now();
      const handles = await Promise.all([1, 2, 3].map(() => client.enqueue('slow', [])));
      // `slow` is 1/m: one starts now, the two others wait in the broker for their turns, a minute apart.
      const waiting = async () =>
        (await Promise.all(handles.map((h) => h.state()))).filter((s) => s?.rateLimited === true);
      await expect.poll(async () => (await waiting()).length, { timeout: 20_000 }).toBe(2);
      const shown = await waiting();
      for (const s of shown) {
        expect(s).toMatchObject({ state: 'PENDING', queue: 'default', retries: 0 });
        expect(s?.dueAt).toBeGreaterThan(before);
        expect(s?.dueAt).toBeLessThanOrEqual(Date.now() + 3 * 60_000);
      }
      const [first, second] = shown.map((s) => s!.dueAt!).sort((a, b) => a - b);
      expect(second! - first!).toBeGreaterThanOrEqual(59_000);
      expect(worker.stats().consumer).toMatchObject({ deferred: 2, retried: 0 });

      const deferred: NodeEvent[] = [];
      const stop = new AbortController();
      for await (const e of client.events({ recent: 1000, task: 'slow', signal: stop.signal })) {
        if (e.type === 'job-deferred') deferred.push(e);
        if (deferred.length === 2) stop.abort();
      }
      expect(new Set(deferred.map((e) => e.jobId))).toEqual(new Set(shown.map((s) => s!.id)));
      for (const e of deferred) expect(e.dueAt).toBeGreaterThan(e.at);
    },
  );

  it('a bad rate is refused with an error naming it: enqueue and defineTasks', async () => {
    const client = makeClient(`memory://${uniqueName('rlbad')}`);
    await expect(client.enqueue('plain', [], { rateLimit: '10/x' })).rejects.toThrow(OptionError);
    await expect(client.enqueue('plain', [], { rateLimit: '10/x' })).rejects.toThrow(
      /invalid option rateLimit: "10\/x" \(expected a rate like "100\/s"/,
    );
    await expect(client.enqueue('plain', [], { rateLimit: '0/s' })).rejects.toThrow(/rateLimit: "0\/s"/);
    expect(() => defineTasks({ t: { run: () => 1, rateLimit: 'fast' } })).toThrow(
      /task "t": invalid option rateLimit: "fast"/,
    );
    expect(() => defineTasks({ t: { run: () => 1, rateLimit: 5 as unknown as string } })).toThrow(OptionError);
  });
});
