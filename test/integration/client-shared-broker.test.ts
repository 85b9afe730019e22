/**
 * Clients sharing one broker object (`new Client({ broker })`) each wait
 * for their results at once: their blocking reads are not queued one
 * behind the other on one connection, where a result sat unread while the
 * read ahead of it blocked, and the read behind outlived its watchdog,
 * which replaced the connection. Likewise two followers of the events.
 */
import { describe, expect, it, vi } from 'vitest';
import { Client } from 'prefork';
import { createBroker } from 'prefork/broker';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { captureLog, makeWorker, silent, uniqueName } from '../helpers/worker.js';

const own = ownRedisPerTest();

/** Connections of the server blocked now in `cmd`. */
async function blockedIn(cmd: string): Promise<number> {
  const list = (await own.raw.call('CLIENT', 'LIST')) as string;
  return list.split('\n').filter((line) => line.includes(` cmd=${cmd} `) && / flags=\S*b/.test(line)).length;
}

describe('Clients sharing one broker object', () => {
  it('each blocks for its results at once, and each gets its result', async () => {
    const namespace = uniqueName('ns');
    const { log, lines } = captureLog();
    const broker = createBroker(own.server.url, { namespace, logger: log });
    const clients = [new Client({ broker, logger: silent }), new Client({ broker, logger: silent })];
    try {
      const jobs = await Promise.all(clients.map((c, i) => c.enqueue('echo', [i], { queue: 'later' })));
      const results = Promise.all(jobs.map((job) => job.result()));
      results.catch(() => undefined); // awaited below, unless an assertion fails first
      await vi.waitFor(async () => expect(await blockedIn('blmpop')).toBe(2), { timeout: 10_000 });
      await makeWorker({ broker: own.server.url, namespace, queues: ['later'] }).start();
      expect(await results).toEqual([0, 1]);
      expect(lines.filter((l) => String(l.msg).includes('outlived its timeout'))).toEqual([]);
    } finally {
      for (const c of clients) await c.close();
      await broker.close();
    }
  });

  it('two followers of the events each block at once', async () => {
    const broker = createBroker(own.server.url, { namespace: uniqueName('ns'), logger: silent });
    const client = new Client({ broker, logger: silent });
    const stop = new AbortController();
    const follow = async (): Promise<void> => {
      for await (const _ of client.events({ signal: stop.signal }));
    };
    try {
      const followers = [follow(), follow()];
      await vi.waitFor(async () => expect(await blockedIn('xread')).toBe(2), { timeout: 10_000 });
      stop.abort();
      await Promise.all(followers);
    } finally {
      await client.close();
      await broker.close();
    }
  });
});
