import { describe, expect, it } from 'vitest';
import { ExpiryHeap } from '../../../dist/broker/memory/expiry-heap.js';

describe('ExpiryHeap', () => {
  it('gives keys back by expiry, whatever order they were pushed in, and only those due', () => {
    const heap = new ExpiryHeap<string>();
    const times = [50, 10, 90, 30, 70, 20, 80, 40, 60, 0];
    for (const at of times) heap.push(at, `k${at}`);
    expect(heap.nextAt).toBe(0);
    expect(heap.takeDue(35)).toEqual(['k0', 'k10', 'k20', 'k30']);
    expect(heap.nextAt).toBe(40);
    expect(heap.takeDue(1_000)).toEqual(['k40', 'k50', 'k60', 'k70', 'k80', 'k90']);
    expect(heap.size).toBe(0);
    expect(heap.nextAt).toBeUndefined();
  });
});
