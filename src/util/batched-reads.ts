/**
 * Reads asked for in the same turn of the event loop, sent as one call of
 * `readMany` in the next (setImmediate): 10,000 waits begun together cost a
 * few MGETs, not 10,000 GETs with as many replies to parse. A key asked for
 * twice in a turn is read once. A failed call fails every read it carried.
 */
export class BatchedReads<V> {
  private pending = new Map<string, { resolve: (value: V) => void; reject: (err: unknown) => void }[]>();
  private scheduled = false;

  constructor(private readonly readMany: (keys: string[]) => Promise<readonly V[]>) {}

  read(key: string): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      const readers = this.pending.get(key);
      if (readers === undefined) this.pending.set(key, [{ resolve, reject }]);
      else readers.push({ resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = new Map();
    const keys = [...batch.keys()];
    let call: Promise<readonly V[]>;
    try {
      call = this.readMany(keys);
    } catch (err) {
      call = Promise.reject(err);
    }
    call.then(
      (values) => keys.forEach((key, i) => batch.get(key)?.forEach((r) => r.resolve(values[i] as V))),
      (err: unknown) => batch.forEach((readers) => readers.forEach((r) => r.reject(err))),
    );
  }
}
