import { describe, expect, it } from 'vitest';
import { Fifo } from '../../../dist/util/fifo.js';

describe('Fifo', () => {
  it('gives items back in the order they went in', () => {
    const q = new Fifo<number>();
    q.push(1);
    q.push(2);
    q.push(3);
    expect(q.length).toBe(3);
    expect(q.peek()).toBe(1);
    expect([q.shift(), q.shift(), q.shift()]).toEqual([1, 2, 3]);
    expect(q.length).toBe(0);
  });

  it('returns undefined from shift and peek when empty', () => {
    const q = new Fifo<string>();
    expect(q.shift()).toBeUndefined();
    expect(q.peek()).toBeUndefined();
    q.push('a');
    q.shift();
    expect(q.shift()).toBeUndefined();
  });

  it('takes the last n items with popBack, in order, never more than it holds', () => {
    const q = new Fifo<number>();
    for (const n of [1, 2, 3, 4, 5]) q.push(n);
    q.shift();
    expect(q.popBack(2)).toEqual([4, 5]);
    expect([...q]).toEqual([2, 3]);
    expect(q.popBack(5)).toEqual([2, 3]);
    expect(q.length).toBe(0);
    expect(q.popBack(1)).toEqual([]);
    q.push(6);
    expect([q.peek(), q.length]).toEqual([6, 1]);
  });

  it('takes up to n accepted items from the back with popBackWhere, leaving the others in place', () => {
    const q = new Fifo<number>();
    for (const n of [1, 2, 3, 4, 5, 6, 7]) q.push(n);
    q.shift();
    const even = (n: number): boolean => n % 2 === 0;
    expect(q.popBackWhere(2, even)).toEqual([4, 6]);
    expect([...q]).toEqual([2, 3, 5, 7]);
    expect(q.popBackWhere(5, even)).toEqual([2]);
    expect([...q]).toEqual([3, 5, 7]);
    expect(q.popBackWhere(3, even)).toEqual([]);
    expect([q.peek(), q.length]).toEqual([3, 3]);
    expect(q.popBackWhere(9, () => true)).toEqual([3, 5, 7]);
    expect(q.length).toBe(0);
    q.push(8);
    expect([q.peek(), q.length]).toEqual([8, 1]);
  });

  it('puts items back in their places by the order given, wherever they came from', () => {
    const q = new Fifo<number>();
    for (const n of [5, 6, 7, 8]) q.push(n);
    q.shift();
    q.putBack([3, 1], (a, b) => a - b);
    expect(q.length).toBe(5);
    // Put back later than some held: 4 goes between 3 and 6; 9 after all of them.
    q.putBack([9, 4], (a, b) => a - b);
    expect(q.drain()).toEqual([1, 3, 4, 6, 7, 8, 9]);
    q.putBack([2], (a, b) => a - b);
    expect([q.peek(), q.length]).toEqual([2, 1]);
  });

  it('drain empties it and returns what it held', () => {
    const q = new Fifo<number>();
    q.push(1);
    q.push(2);
    expect(q.drain()).toEqual([1, 2]);
    expect(q.length).toBe(0);
    q.push(3);
    expect([...q]).toEqual([3]);
  });

  it('iterates without consuming', () => {
    const q = new Fifo<number>();
    for (const n of [5, 6, 7]) q.push(n);
    q.shift();
    expect([...q]).toEqual([6, 7]);
    expect(q.length).toBe(2);
  });

  it('keeps order across many pushes and shifts (compaction)', () => {
    const q = new Fifo<number>();
    const out: number[] = [];
    let next = 0;
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 7000; i++) q.push(next++);
      for (let i = 0; i < 6000; i++) out.push(q.shift()!);
    }
    while (q.length > 0) out.push(q.shift()!);
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i));
  });

  it('removeFirst takes the first match only, looking no further than it, and keeps the order of the rest', () => {
    const q = new Fifo<number>();
    for (let n = 0; n < 8; n++) q.push(n % 4);
    q.shift();
    let looked = 0;
    const is = (want: number) => (n: number) => (looked++, n === want);
    expect(q.removeFirst(is(1))).toBe(1);
    expect(looked).toBe(1);
    expect([...q]).toEqual([2, 3, 0, 1, 2, 3]);
    looked = 0;
    expect(q.removeFirst(is(0))).toBe(0);
    expect(looked).toBe(3);
    expect([...q]).toEqual([2, 3, 1, 2, 3]);
    expect(q.removeFirst(is(9))).toBeUndefined();
    expect([...q]).toEqual([2, 3, 1, 2, 3]);
    q.push(4);
    expect(q.shift()).toBe(2);
    expect([...q]).toEqual([3, 1, 2, 3, 4]);
  });

  it('removeWhere takes items from anywhere, in order, and keeps the order of the rest', () => {
    const q = new Fifo<number>();
    for (let n = 0; n < 8; n++) q.push(n);
    q.shift();
    expect(q.removeWhere((n) => n % 3 === 0)).toEqual([3, 6]);
    expect([...q]).toEqual([1, 2, 4, 5, 7]);
    expect(q.removeWhere(() => false)).toEqual([]);
    expect([...q]).toEqual([1, 2, 4, 5, 7]);
    q.push(8);
    expect(q.shift()).toBe(1);
    expect([...q]).toEqual([2, 4, 5, 7, 8]);
  });
});
