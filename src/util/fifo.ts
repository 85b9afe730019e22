/**
 * An array-backed FIFO that does not shift on every take (200,000 queued
 * jobs must stay cheap): the pool's buffers, the child's queue of jobs, the
 * memory broker's queues.
 */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /**
   * Puts items back in their places by `order`, the order the FIFO is kept
   * in: each goes ahead of the items that come after it, not of all of them.
   * O(n).
   */
  putBack(items: readonly T[], order: (a: T, b: T) => number): void {
    if (items.length === 0) return;
    const back = [...items].sort(order);
    const merged: T[] = [];
    let i = 0;
    let j = this.head;
    while (i < back.length && j < this.items.length) {
      const held = this.items[j] as T;
      if (order(back[i] as T, held) <= 0) {
        merged.push(back[i++] as T);
      } else {
        merged.push(held);
        j++;
      }
    }
    while (i < back.length) merged.push(back[i++] as T);
    while (j < this.items.length) merged.push(this.items[j++] as T);
    this.items = merged;
    this.head = 0;
  }

  /** The item `i` places from the front (0: the next one out), if there is one. */
  at(i: number): T | undefined {
    return i >= 0 && i < this.length ? this.items[this.head + i] : undefined;
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Takes out the last `n` items (fewer if it holds fewer) and returns them in order. */
  popBack(n: number): T[] {
    return this.popBackWhere(n, () => true);
  }

  /**
   * Takes out up to `n` of the items `take` accepts, the last first, and
   * returns them in order; the others keep their places. O(items looked at).
   */
  popBackWhere(n: number, take: (item: T) => boolean): T[] {
    const out: T[] = [];
    const kept: T[] = [];
    let i = this.items.length - 1;
    for (; i >= this.head && out.length < n; i--) {
      const item = this.items[i] as T;
      (take(item) ? out : kept).push(item);
    }
    this.items.length = i + 1;
    for (let k = kept.length - 1; k >= 0; k--) this.items.push(kept[k]);
    if (this.head >= this.items.length) {
      this.items = [];
      this.head = 0;
    }
    return out.reverse();
  }

  /**
   * Takes out the first item `take` accepts, keeping the order of the rest;
   * O(its position): one at the front (as a revoke in queue order finds
   * them) is taken as shift() takes it.
   */
  removeFirst(take: (item: T) => boolean): T | undefined {
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as T;
      if (!take(item)) continue;
      if (i === this.head) return this.shift();
      this.items.splice(i, 1);
      return item;
    }
    return undefined;
  }

  /** Takes out the items `take` accepts, wherever they are, keeping the order of the rest; returns them in order. O(n): not for the hot path. */
  removeWhere(take: (item: T) => boolean): T[] {
    const kept: T[] = [];
    const taken: T[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as T;
      (take(item) ? taken : kept).push(item);
    }
    if (taken.length > 0) {
      this.items = kept;
      this.head = 0;
    }
    return taken;
  }

  /** Empties the FIFO and returns what it held, in order. */
  drain(): T[] {
    const out = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return out;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i] as T;
  }
}
