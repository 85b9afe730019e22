import { describe, expect, it } from 'vitest';
import { MemoryQueue } from '../../../dist/broker/memory/memory-queue.js';
import type { JobRecord } from '../../../dist/broker/types.js';

function job(id: string): JobRecord {
  return {
    id,
    task: 't',
    queue: 'q',
    payload: new Uint8Array([0x90]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: 0,
  };
}
const ids = (jobs: readonly { id: string }[]): string[] => jobs.map((j) => j.id);

describe('MemoryQueue', () => {
  it('serves redelivered jobs before the main list', () => {
    const q = new MemoryQueue();
    q.main.push(job('m1'));
    q.rd.push(job('r1'));
    q.main.push(job('m2'));
    expect([q.take(), q.take(), q.take(), q.take()].map((j) => j?.id)).toEqual(['r1', 'm1', 'm2', undefined]);
  });

  it('keeps delayed jobs in due order, equal due times in insertion order, and says when one became the earliest', () => {
    const q = new MemoryQueue();
    expect(q.addDelayed({ dueAt: 300, job: job('c') })).toBe(true);
    expect(q.addDelayed({ dueAt: 100, job: job('a') })).toBe(true);
    expect(q.addDelayed({ dueAt: 300, job: job('d') })).toBe(false);
    expect(q.addDelayed({ dueAt: 200, job: job('b') })).toBe(false);
    expect(q.addDelayed({ dueAt: 100, job: job('a2') })).toBe(false);
    expect(q.nextDueAt).toBe(100);
    expect(q.promote(99)).toBe(0);
    expect(q.promote(200)).toBe(3);
    expect(ids(q.main.drain())).toEqual(['a', 'a2', 'b']);
    expect(q.nextDueAt).toBe(300);
    expect(q.promote(1_000)).toBe(2);
    expect(ids(q.main.drain())).toEqual(['c', 'd']);
    expect(q.nextDueAt).toBeUndefined();
  });

  it('purge drops waiting and delayed jobs and returns them', () => {
    const q = new MemoryQueue();
    q.main.push(job('a'));
    q.rd.push(job('b'));
    q.addDelayed({ dueAt: 5, job: job('c') });
    q.reserved = 2;
    expect(ids(q.purge()).sort()).toEqual(['a', 'b', 'c']);
    expect([q.waiting, q.delayedCount, q.reserved]).toEqual([0, 0, 2]);
  });

  it('bounds the dead set by deadMax, lists newest first, unburies by id or all', () => {
    const q = new MemoryQueue();
    for (const id of ['a', 'b', 'c', 'd']) q.bury({ job: job(id), reason: id, diedAt: 1 }, 3);
    expect(q.deadCount).toBe(3);
    expect(ids(q.listDead(10).map((d) => d.job))).toEqual(['d', 'c', 'b']);
    expect(ids(q.listDead(1).map((d) => d.job))).toEqual(['d']);
    expect(q.listDead(0)).toEqual([]);
    expect(ids(q.unbury(['c', 'zzz']).map((d) => d.job))).toEqual(['c']);
    expect(ids(q.unbury(undefined).map((d) => d.job))).toEqual(['b', 'd']);
    expect(q.deadCount).toBe(0);
  });
});
