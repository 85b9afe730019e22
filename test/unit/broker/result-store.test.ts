import { afterEach, describe, expect, it, vi } from 'vitest';
import { REPLY_MAX, ResultStore } from '../../../dist/broker/memory/result-store.js';
import type { ResultRecord } from '../../../dist/broker/types.js';

function rec(id: string, value: unknown = 1): ResultRecord {
  return { id, task: 't', queue: 'q', state: 'SUCCESS', value, retries: 0 };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ResultStore', () => {
  it('stores and returns copies', () => {
    const store = new ResultStore();
    const r = rec('a', { list: [1] });
    store.set(r, 1_000, 0);
    (r.value as { list: number[] }).list.push(2);
    const got = store.get('a', 10)!;
    expect(got.value).toEqual({ list: [1] });
    (got.value as { list: number[] }).list.push(3);
    expect(store.get('a', 10)!.value).toEqual({ list: [1] });
    store.dispose();
  });

  it('a result is gone once its TTL passed', () => {
    const store = new ResultStore();
    store.set(rec('a'), 1_000, 0);
    expect(store.get('a', 999)).toBeDefined();
    expect(store.get('a', 1_000)).toBeUndefined();
    store.dispose();
  });

  it('replies go to the client named, once, without expired results; announcing wakes its waiters only', () => {
    const store = new ResultStore();
    const woken: string[] = [];
    const stop1 = store.onAnnounce('c1', () => woken.push('c1'));
    store.onAnnounce('c2', () => woken.push('c2'));
    store.set(rec('a'), 100, 0);
    store.set(rec('b'), 10_000, 0);
    store.announce('c1', 'a');
    store.announce('c1', 'b');
    expect(woken).toEqual(['c1', 'c1']);
    expect(store.takeReplies('c1', 500)?.records.map((r) => r.id)).toEqual(['b']);
    expect(store.takeReplies('c1', 500)).toBeUndefined();
    stop1();
    store.announce('c1', 'b');
    expect(woken).toEqual(['c1', 'c1']);
    store.dispose();
  });

  it('a timer set to the oldest expiry sweeps expired results', () => {
    vi.useFakeTimers({ now: 0 });
    const store = new ResultStore();
    store.set(rec('a'), 2_000, Date.now());
    store.set(rec('b'), 5_000, Date.now());
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(2_000);
    // Swept: even a read "in the past" no longer finds it.
    expect(store.get('a', 0)).toBeUndefined();
    expect(store.get('b', 0)).toBeDefined();
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(3_000);
    expect(store.get('b', 0)).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
    store.dispose();
  });

  it('each result is swept at its own expiry, even one stored after a result kept longer', () => {
    vi.useFakeTimers({ now: 0 });
    const store = new ResultStore();
    store.set(rec('day'), 86_400_000, Date.now());
    store.set(rec('short'), 2_000, Date.now());
    // Rewritten with a longer TTL: kept to the new expiry, not swept at the first.
    store.set(rec('renewed'), 2_000, Date.now());
    store.set(rec('renewed'), 10_000, Date.now());
    vi.advanceTimersByTime(2_000);
    // Swept: even a read "in the past" no longer finds it.
    expect(store.get('short', 0)).toBeUndefined();
    expect(store.get('renewed', 0)).toBeDefined();
    expect(store.get('day', 0)).toBeDefined();
    vi.advanceTimersByTime(8_000);
    expect(store.get('renewed', 0)).toBeUndefined();
    expect(store.get('day', 0)).toBeDefined();
    store.dispose();
  });

  it('a reply list keeps the newest REPLY_MAX ids: a client that never takes them costs a bounded list', () => {
    const store = new ResultStore();
    for (let i = 0; i < REPLY_MAX + 50; i++) {
      store.set(rec(`r${i}`), 60_000, 0);
      store.announce('c', `r${i}`);
    }
    const got = store.takeReplies('c', 1)!.records;
    expect(got).toHaveLength(REPLY_MAX);
    expect(got[0]!.id).toBe('r50');
    store.dispose();
  });

  it('the sweep drops reply ids whose result expired, even while fresh ones remain', () => {
    vi.useFakeTimers({ now: 0 });
    const store = new ResultStore();
    store.set(rec('old'), 1_000, Date.now());
    store.announce('c', 'old');
    vi.advanceTimersByTime(500);
    store.set(rec('new'), 1_000, Date.now());
    store.announce('c', 'new');
    vi.advanceTimersByTime(600);
    expect(store.replyIds('c')).toEqual(['new']);
    store.dispose();
  });

  it('a result TTL longer than a timer can run does not spin the sweep', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w.name);
    };
    process.on('warning', onWarning);
    const store = new ResultStore();
    try {
      store.set(rec('a'), 30 * 86_400_000, Date.now());
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(warnings).not.toContain('TimeoutOverflowWarning');
      expect(store.get('a', Date.now())).toBeDefined();
    } finally {
      store.dispose();
      process.off('warning', onWarning);
    }
  });
});
