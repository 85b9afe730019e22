/**
 * Reads asked for in the same turn of the event loop, sent as one call of
 * `readMany` in the next (setImmediate): 10,000 waits begun together cost a
 * few MGETs, not 10,000 GETs with as many replies to parse. A key asked for
 * twice in a turn is read once. A call that fails is split in halves, read
 * again, down to the key whose own read fails: one unreadable value (a
 * stored result that does not decode) must not fail the reads it shared a
 * call with, as it did not when each was read alone. A failure that
 * `failsAll` says every call would meet (the broker unreachable or closed)
 * fails every read of the call at once.
 */
export class BatchedReads<V> {
  private pending = new Map<string, Readers<V>>();
  private scheduled = false;

  constructor(
    private readonly readMany: (keys: string[]) => Promise<readonly V[]>,
    private readonly failsAll: (err: unknown) => boolean = () => false,
  ) {}

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
    this.send([...batch.keys()], batch);
  }

  private send(keys: string[], batch: ReadonlyMap<string, Readers<V>>): void {
    let call: Promise<readonly V[]>;
    try {
      call = this.readMany(keys);
    } catch (err) {
      call = Promise.reject(err);
    }
    call.then(
      (values) => keys.forEach((key, i) => batch.get(key)?.forEach((r) => r.resolve(values[i] as V))),
      (err: unknown) => {
        if (keys.length > 1 && !this.failsAll(err)) {
          const half = Math.ceil(keys.length / 2);
          this.send(keys.slice(0, half), batch);
          this.send(keys.slice(half), batch);
          return;
        }
        for (const key of keys) batch.get(key)?.forEach((r) => r.reject(err));
      },
    );
  }
}

type Readers<V> = { resolve: (value: V) => void; reject: (err: unknown) => void }[];
