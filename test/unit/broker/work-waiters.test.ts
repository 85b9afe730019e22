import { afterEach, describe, expect, it, vi } from 'vitest';
import { WorkWaiters } from '../../../dist/broker/memory/work-waiters.js';

/** Queues as the waiters see them: waiting counts and due times set by the test. */
function view() {
  const waiting = new Map<string, number>();
  const due = new Map<string, number>();
  return {
    waiting,
    due,
    view: {
      ready: (q: string, now: number) => (waiting.get(q) ?? 0) > 0 || (due.get(q) ?? Infinity) <= now,
      nextDueAt: (q: string) => due.get(q),
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('WorkWaiters', () => {
  it('wakes the waiters of a queue in arrival order while jobs are there', () => {
    const v = view();
    const waiters = new WorkWaiters(v.view);
    const calls: string[] = [];
    const make = (name: string, queues: string[]) => {
      const w = {
        queues,
        attempt: () => {
          calls.push(name);
          v.waiting.set('q', (v.waiting.get('q') ?? 0) - 1);
          waiters.remove(w);
        },
      };
      waiters.add(w);
    };
    make('w1', ['q']);
    make('w2', ['x', 'q']);
    make('w3', ['q']);
    make('other', ['x']);
    v.waiting.set('q', 2);
    waiters.changed(['q']);
    expect(calls).toEqual(['w1', 'w2']);
    waiters.changed(['q']); // nothing left: nobody is woken
    expect(calls).toEqual(['w1', 'w2']);
    waiters.dispose();
  });

  it('holds one timer, set to the earliest due time among waited queues, re-armed only when it moves', () => {
    vi.useFakeTimers({ now: 0 });
    const v = view();
    const waiters = new WorkWaiters(v.view);
    const woken: number[] = [];
    v.due.set('q', 1_000);
    v.due.set('unwatched', 10);
    const w = { queues: ['q'], attempt: () => woken.push(Date.now()) };
    waiters.add(w);
    expect(vi.getTimerCount()).toBe(1);
    v.due.set('q', 400); // a delayed job became the earliest
    waiters.changed(['q']);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(399);
    expect(woken).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(woken).toEqual([400]);
    // The waiter did not take the job (a fenced node): no timer spins on a due time already passed.
    expect(vi.getTimerCount()).toBe(0);
    v.due.set('q', 900);
    waiters.changed(['q']);
    vi.advanceTimersByTime(500);
    expect(woken).toEqual([400, 900]);
    waiters.remove(w);
    expect(vi.getTimerCount()).toBe(0);
    waiters.dispose();
  });
});
