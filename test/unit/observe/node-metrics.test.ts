import { describe, expect, it } from 'vitest';
import type { QueueCounts } from '../../../dist/broker/types.js';
import { NodeMetrics, type StatsForMetrics } from '../../../dist/observe/node-metrics.js';

/** A node's stats with nothing running: the gauges read them, this test is about the queue counts. */
const idle = { pool: { processes: [] }, consumer: { reserved: 0 }, unacked: 0 } as unknown as StatsForMetrics;

describe('node metrics', () => {
  it('scrapes that come while the queue counts are read share that read: asking more often costs Redis no more', async () => {
    const reads: ((counts: QueueCounts[]) => void)[] = [];
    const metrics = await NodeMetrics.create({
      stats: () => idle,
      taskNames: () => [],
      queueCounts: () => new Promise((resolve) => reads.push(resolve)),
    });
    const scrapes = Array.from({ length: 8 }, () => metrics.scrape());
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toHaveLength(1);
    reads[0]?.([{ queue: 'default', waiting: 3, reserved: 1, delayed: 0, dead: 2 }]);
    for (const { body } of await Promise.all(scrapes)) {
      expect(body).toContain('prefork_queue_jobs{queue="default",state="waiting"} 3');
      expect(body).toContain('prefork_queue_jobs{queue="default",state="dead"} 2');
    }
    // A scrape after that read reads again: the counts are never older than the scrape.
    const later = metrics.scrape();
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toHaveLength(2);
    reads[1]?.([{ queue: 'default', waiting: 5, reserved: 0, delayed: 0, dead: 2 }]);
    expect((await later).body).toContain('prefork_queue_jobs{queue="default",state="waiting"} 5');
  });

  it("every node of a process shows the process's metrics, and its own", async () => {
    const source = { stats: () => idle, taskNames: () => [], queueCounts: () => Promise.resolve(undefined) };
    const [a, b] = [await NodeMetrics.create(source), await NodeMetrics.create(source)];
    for (const metrics of [a, b]) {
      const { body, contentType } = await metrics.scrape();
      expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
      for (const name of ['process_cpu_user_seconds_total', 'nodejs_eventloop_lag_seconds', 'prefork_pool_processes'])
        expect(body, name).toMatch(new RegExp(`^${name} `, 'm'));
    }
  });
});
