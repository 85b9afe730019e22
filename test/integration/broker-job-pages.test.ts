/**
 * Broker.listJobs (`prefork jobs`, `prefork inspect scheduled`) over both
 * brokers: pages of at most `limit` jobs, a cursor that carries on where the
 * page ended, each job shown once, in the state's order.
 */
import { describe, expect, it } from 'vitest';
import type { Broker, JobPage, ListedState, NewJob } from '../../dist/broker/types.js';
import { eachBrokerScope } from '../helpers/broker-scope.js';

function job(id: string, queue = 'q', extra: Partial<NewJob> = {}): NewJob {
  return {
    id,
    task: 'work',
    queue,
    payload: new Uint8Array([0x91, 0x01]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: Date.now(),
    ...extra,
  };
}

/** Every page from the first, and the ids on each. */
async function allPages(b: Broker, queue: string, state: ListedState, limit: number): Promise<JobPage[]> {
  const pages: JobPage[] = [];
  let cursor: string | undefined;
  do {
    const page = await b.listJobs(queue, state, limit, cursor);
    expect(page.jobs.length).toBeLessThanOrEqual(limit);
    pages.push(page);
    cursor = page.next;
  } while (cursor !== undefined && pages.length < 100);
  return pages;
}

const idsOf = (pages: JobPage[]): string[] => pages.flatMap((p) => p.jobs.map((l) => l.job.id));

describe.each(['memory', 'redis'] as const)('Broker.listJobs over %s', (kind) => {
  const { broker, node } = eachBrokerScope(kind, 'pages');

  it('waiting: redelivered jobs first, then the queue in order; reserved jobs are not waiting', async () => {
    const b = await broker();
    const me = await node(b, 'n1', ['q']);
    await b.enqueue(Array.from({ length: 12 }, (_, i) => job(`w${i}`)));
    // Two fetched (reserved), one of them given back (redelivered: served first).
    const got = (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 2 }], count: 2, settle: [] })).deliveries;
    await b.settle([{ kind: 'giveBack', delivery: got[0]! }]);
    const pages = await allPages(b, 'q', 'waiting', 4);
    expect(idsOf(pages)).toEqual(['w0', ...Array.from({ length: 10 }, (_, i) => `w${i + 2}`)]);
    expect(pages.map((p) => p.jobs.length)).toEqual([4, 4, 3]);
    expect(pages[0]!.jobs[0]!.job.redeliveries).toBe(1);
  });

  it('delayed: by due time, jobs sharing a due time each shown once across pages', async () => {
    const b = await broker();
    const base = Date.now() + 3_600_000;
    // Five share one due time, so a page boundary falls among them.
    const dues = [base + 5, base, base, base, base, base, base + 1, base + 9];
    await b.enqueue(dues.map((eta, i) => job(`d${i}`, 'q', { eta })));
    const pages = await allPages(b, 'q', 'delayed', 3);
    const listed = pages.flatMap((p) => p.jobs);
    expect(listed.map((l) => l.dueAt)).toEqual([...dues].sort((x, y) => x - y));
    expect(new Set(listed.map((l) => l.job.id)).size).toBe(dues.length);
    expect(listed.find((l) => l.job.id === 'd7')).toMatchObject({ dueAt: base + 9, job: { task: 'work' } });
  });

  it('dead: newest first, with the reason', async () => {
    const b = await broker();
    const me = await node(b, 'n1', ['q']);
    await b.enqueue(Array.from({ length: 5 }, (_, i) => job(`x${i}`)));
    for (let i = 0; i < 5; i++) {
      const [d] = (await b.fetch({ nodeId: me, plan: [{ queue: 'q', quota: 1 }], count: 1, settle: [] })).deliveries;
      await b.settle([{ kind: 'dead', delivery: d!, reason: `bad ${d!.job.id}` }]);
    }
    const pages = await allPages(b, 'q', 'dead', 2);
    expect(idsOf(pages)).toEqual(['x4', 'x3', 'x2', 'x1', 'x0']);
    expect(pages[0]!.jobs[0]).toMatchObject({ reason: 'bad x4', diedAt: expect.any(Number) as number });
  });

  it('an empty queue is one empty page; a page that ends the list has no cursor', async () => {
    const b = await broker();
    expect(await b.listJobs('nothing', 'waiting', 10)).toEqual({ jobs: [], next: undefined });
    await b.enqueue([job('only')]);
    expect((await b.listJobs('q', 'waiting', 10)).next).toBeUndefined();
  });

  it('a cursor from another state, a made-up one, a bad limit or state: OptionError naming it', async () => {
    const b = await broker();
    await b.enqueue([job('a'), job('b')]);
    const { next } = await b.listJobs('q', 'waiting', 1);
    expect(next).toBeDefined();
    await expect(b.listJobs('q', 'dead', 1, next)).rejects.toMatchObject({
      code: 'PREFORK_BAD_OPTION',
      option: 'cursor',
    });
    await expect(b.listJobs('q', 'delayed', 1, 'garbage')).rejects.toMatchObject({ option: 'cursor' });
    await expect(b.listJobs('q', 'waiting', 0)).rejects.toMatchObject({ option: 'limit' });
    await expect(b.listJobs('q', 'waiting', 10_001)).rejects.toMatchObject({ option: 'limit' });
    await expect(b.listJobs('q', 'running' as ListedState, 1)).rejects.toMatchObject({ option: 'state' });
  });
});
