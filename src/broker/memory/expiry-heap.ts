/** One expiry: `key` is due at `at` (epoch ms). */
interface Expiry<K> {
  at: number;
  key: K;
}

/**
 * Keys by the time they expire, earliest first (a binary min-heap): the
 * memory broker's things with a TTL (results, ended ids) expire each at its
 * own time, as Redis keys do, whatever TTLs were given in whatever order.
 * A key may be pushed more than once (its TTL renewed): the owner checks,
 * for each key taken, whether it is really due.
 */
export class ExpiryHeap<K> {
  private readonly items: Expiry<K>[] = [];

  get size(): number {
    return this.items.length;
  }

  /** The earliest expiry, if any. */
  get nextAt(): number | undefined {
    return this.items[0]?.at;
  }

  push(at: number, key: K): void {
    const items = this.items;
    items.push({ at, key });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((items[parent] as Expiry<K>).at <= at) break;
      [items[i], items[parent]] = [items[parent] as Expiry<K>, items[i] as Expiry<K>];
      i = parent;
    }
  }

  /** Takes out every key due by `now` (at <= now), earliest first. */
  takeDue(now: number): K[] {
    const out: K[] = [];
    while (this.items.length > 0 && (this.items[0] as Expiry<K>).at <= now) out.push(this.pop());
    return out;
  }

  private pop(): K {
    const items = this.items;
    const top = items[0] as Expiry<K>;
    const last = items.pop() as Expiry<K>;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let least = i;
        if (l < items.length && (items[l] as Expiry<K>).at < (items[least] as Expiry<K>).at) least = l;
        if (r < items.length && (items[r] as Expiry<K>).at < (items[least] as Expiry<K>).at) least = r;
        if (least === i) break;
        [items[i], items[least]] = [items[least] as Expiry<K>, items[i] as Expiry<K>];
        i = least;
      }
    }
    return top.key;
  }
}
