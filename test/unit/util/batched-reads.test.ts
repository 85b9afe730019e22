import { describe, expect, it } from 'vitest';
import { BatchedReads } from '../../../dist/util/batched-reads.js';

/** A readMany over `store` that fails any call carrying `bad`, and records each call's keys. */
function reader(store: Record<string, number>, bad: string, calls: string[][]) {
  return async (keys: string[]): Promise<number[]> => {
    calls.push(keys);
    await Promise.resolve(); // answered later, as a broker does
    if (keys.includes(bad)) throw new Error(`cannot read ${bad}`);
    return keys.map((k) => store[k] as number);
  };
}

describe('BatchedReads', () => {
  it('a key whose read fails fails only its own readers, not those it shared a call with', async () => {
    const calls: string[][] = [];
    const reads = new BatchedReads(reader({ a: 1, b: 2, c: 3, d: 4, e: 5 }, 'c', calls));
    const settled = await Promise.allSettled(['a', 'b', 'c', 'd', 'e', 'c'].map((k) => reads.read(k)));
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : 'failed'))).toEqual([
      1,
      2,
      'failed',
      4,
      5,
      'failed',
    ]);
    expect(calls[0]).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('a failure every call would meet fails the whole call at once, not split', async () => {
    const calls: string[][] = [];
    const reads = new BatchedReads(reader({ a: 1, b: 2 }, 'a', calls), () => true);
    const settled = await Promise.allSettled(['a', 'b'].map((k) => reads.read(k)));
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toEqual([['a', 'b']]);
  });
});
