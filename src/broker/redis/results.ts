import type { ChainableCommander, Redis } from 'ioredis';
import { isFinalState } from '../job-state.js';
import type { AnnouncedResults, ResultRecord, Settlement } from '../types.js';
import type { BlockingPool } from './blocking-pool.js';
import { decodeResult, encodeResult } from './entry-codec.js';
import type { Keys } from './keys.js';
import { callScript } from './scripts.js';
import { resultTtlOf } from '../../job-option-checks.js';
import type { Logger } from 'pino';
import { ValueLimit } from './value-limit.js';

/** Most ids taken from a reply list per wake-up. */
const REPLY_BATCH = 1000;
/**
 * Most ids a reply list keeps (the oldest go first): a client that enqueues
 * and never waits costs a bounded list. A read that may have missed dropped
 * ids says so (see waitFor), and its client re-reads its pending results.
 */
const REPLY_MAX = 10_000;
/**
 * A reply list is trimmed (LTRIM) on this broker's first announcement to its
 * client and then once this many more ids were announced, not on every
 * batch: a node of one child announces a few ids per batch. The list then
 * holds at most REPLY_MAX + (REPLY_TRIM_EVERY - 1) per announcing node.
 */
const REPLY_TRIM_EVERY = 256;
/**
 * A final result rides inline in its announcement (so its client need not
 * read it back: a round trip less per wake-up) when its record is at most
 * this many bytes, its client reads inline announcements (JobRecord.replyInline),
 * it is kept no shorter than the reply list (a shorter `resultTtl` is obeyed),
 * and its reply list holds fewer than REPLY_INLINE_WHILE entries. A client
 * that reads keeps its list near empty; one that never waits gets ids once
 * its list is that long, so it costs at most that many records more than ids.
 */
const REPLY_INLINE_MAX = 4096;
const REPLY_INLINE_WHILE = 32;
/** The first byte of an inline announcement (the record follows): no id starts with it, as UTF-8 never does. */
const INLINE_MARK = 0xff;
/** Clients whose last read this broker remembers (the oldest are forgotten: their next read says `missed`). */
const CLIENTS_TRACKED = 1_000;

/**
 * Results: `<ns>:res:<id>` (msgpack, with the job's result TTL, else the
 * broker's), a batch's written by one script (storeResults) in the same
 * round trip as the settlement script, and for a final state announced on
 * the waiting client's reply list: the record itself when small, else the
 * job id. A client blocks on its own list (BLMPOP) and MGETs the ids it
 * popped: no subscription per job, nothing polled.
 */
export class Results {
  /** Per client: the blocking connection's replacements when its last read ended. */
  private readonly replacementsSeen = new Map<string, number>();
  /** Per client: ids announced since this broker last trimmed its reply list (the oldest clients forgotten: trimmed again). */
  private readonly untrimmed = new Map<string, number>();
  /** Where records not stored as results are also looked for (workflows' outcomes). */
  others: OtherRecords | undefined;
  /** The largest record Redis takes (read when the broker connects). */
  readonly limit = new ValueLimit();

  constructor(
    private readonly keys: Keys,
    /** How long results are kept unless a job says otherwise. */
    readonly ttlMs: number,
    private readonly log: Logger,
  ) {}

  /**
   * Adds the result writes of a batch to a pipeline: one storeResults call
   * that stores them in settlement order (a STARTED record before the same
   * job's final one) and announces the final ones to their waiting clients
   * after storing them (a woken client may read them back): an LPUSH and a
   * PEXPIRE per reply list (and an LTRIM now and then: dueForTrim), inside
   * the script, not commands per job. A small record rides in its
   * announcement (REPLY_INLINE_MAX). `unapplied` names the set in which the
   * settlement script before it named the jobs it did not settle (their
   * entries no longer this node's): their records are written only where
   * none is stored.
   */
  addWrites(
    pipe: ChainableCommander,
    settlements: readonly { kind: string; delivery: Settlement['delivery']; result?: ResultRecord | undefined }[],
    unapplied: string,
  ): void {
    /** Per client: its reply list's place among the keys, and how many ids it is told of. */
    let lists: Map<string, { at: number; n: number }> | undefined;
    const keys: string[] = [];
    // storeResults' head (the list count set last), then 4 per result, then a trim flag per list.
    const args: (number | string | Buffer)[] = [0, REPLY_MAX, REPLY_INLINE_WHILE, this.ttlMs];
    for (const s of settlements) {
      if (s.kind === 'giveBack' || s.kind === 'defer' || s.kind === 'release' || s.result === undefined) continue;
      const { job } = s.delivery;
      if (job.options.ignoreResult === true) continue;
      let record = encodeResult(s.result);
      if (record.length > this.limit.bytes) record = encodeResult(this.fitted(s.result, record.length));
      const ttl = resultTtlOf(job.options, this.ttlMs);
      keys.push(this.keys.result(s.result.id));
      let reply = 0;
      if (job.replyTo !== undefined && isFinalState(s.result.state)) {
        lists ??= new Map();
        let list = lists.get(job.replyTo);
        if (list === undefined) lists.set(job.replyTo, (list = { at: lists.size + 1, n: 0 }));
        list.n++;
        reply = list.at;
        // A result kept shorter than the reply list is not copied there: it is gone when its TTL says.
        if (job.replyInline !== true || record.length > REPLY_INLINE_MAX || ttl < this.ttlMs) reply = -reply;
      }
      args.push(ttl, record, reply, s.result.id);
    }
    if (keys.length === 0) return;
    args[0] = lists?.size ?? 0;
    for (const [clientId, { n }] of lists ?? []) {
      keys.push(this.keys.reply(clientId));
      args.push(this.dueForTrim(clientId, n) ? '1' : '0');
    }
    keys.push(unapplied);
    callScript(pipe, 'storeResults', keys, args);
  }

  /**
   * A record Redis would refuse (its value over proto-max-bulk-len): the
   * settlement script acks its job before the write, so it must not fail.
   * A final one becomes a FAILURE saying why; one of a job still running
   * loses its progress value (the job's end writes the record again).
   */
  private fitted(result: ResultRecord, size: number): ResultRecord {
    const { value: _value, progress: _progress, error: _error, ...rest } = result;
    if (!isFinalState(result.state)) return rest;
    const error = this.limit.oversize(result.task, size);
    this.log.error(
      { jobId: result.id, task: result.task, bytes: size, limit: this.limit.bytes },
      "a job's result is larger than Redis takes; stored as a FAILURE saying so",
    );
    return { ...rest, state: 'FAILURE', ...(error === undefined ? {} : { error }) };
  }

  /**
   * What a script that stores results of jobs it finds itself needs
   * (recoverEntries-n.lua: a poison job's FAILURE): the prefixes of a
   * result key and a reply list, the broker's result ttl (also a reply
   * list's) and the most entries a reply list keeps.
   */
  scriptStore(): [string, string, number, number] {
    return [this.keys.result(''), this.keys.reply(''), this.ttlMs, REPLY_MAX];
  }

  /** Announces to `clientId` that the results of `ids` are ready (stored already). */
  addAnnouncement(pipe: ChainableCommander, clientId: string, ids: readonly string[]): void {
    const reply = this.keys.reply(clientId);
    pipe.lpush(reply, ...ids);
    if (this.dueForTrim(clientId, ids.length)) pipe.ltrim(reply, 0, REPLY_MAX - 1);
    pipe.pexpire(reply, this.ttlMs);
  }

  /** Counts `n` ids announced to `clientId`; true when its list is to be trimmed now (REPLY_TRIM_EVERY). */
  private dueForTrim(clientId: string, n: number): boolean {
    const since = this.untrimmed.get(clientId);
    const due = since === undefined || since + n >= REPLY_TRIM_EVERY;
    if (since === undefined && this.untrimmed.size >= CLIENTS_TRACKED)
      this.untrimmed.delete(this.untrimmed.keys().next().value as string);
    this.untrimmed.set(clientId, due ? 0 : (since ?? 0) + n);
    return due;
  }

  /**
   * One round trip: the result's GET and the read of the id's other record
   * go out together (two commands: cheaper for the client than a pipeline
   * of them); a result wins.
   */
  async get(redis: Redis, id: string): Promise<ResultRecord | undefined> {
    const stored = redis.getBuffer(this.keys.result(id));
    const others = this.others;
    const other = others?.read(redis, id);
    other?.catch(() => undefined); // awaited below, unless a result is found (or the GET fails) first
    const raw = await stored;
    if (raw !== null) return decodeResult(raw, this.keys.result(''), id);
    return other === undefined || others === undefined ? undefined : others.decode(id, await other);
  }

  /**
   * Pops what was announced to `clientId` (BLMPOP) and reads those results.
   * The pop takes the ids out of Redis: when its reply is lost with the
   * connection, they are gone. So a read during which (or since this
   * client's last one) the connection was replaced says `missed`, once the
   * old connection is killed in Redis, and the client re-reads what it waits
   * for: nothing popped by the old one can escape that re-read.
   */
  async waitFor(
    redis: Redis,
    blocking: BlockingPool,
    clientId: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<AnnouncedResults> {
    const key = this.keys.reply(clientId);
    const before = this.replacementsSeen.get(clientId);
    const popped = await blocking.block(
      (conn, ms) =>
        conn.callBuffer('BLMPOP', (ms / 1000).toFixed(3), 1, key, 'RIGHT', 'COUNT', REPLY_BATCH) as Promise<
          [Buffer, Buffer[]] | null
        >,
      timeoutMs,
      signal,
      true,
    );
    const now = blocking.replacements;
    this.replacementsSeen.delete(clientId);
    if (this.replacementsSeen.size >= CLIENTS_TRACKED)
      this.replacementsSeen.delete(this.replacementsSeen.keys().next().value as string);
    this.replacementsSeen.set(clientId, now);
    // A client not seen before (or forgotten) may have missed one too.
    const reconnected = before === undefined ? now > 0 : now !== before;
    let missed = reconnected;
    const entries = popped?.[1] ?? [];
    if (entries.length === 0) return { records: [], gone: [], missed, reconnected };
    // Overflow: a pop from a list of REPLY_MAX ids or more (docs/architecture.md,
    // "A client"). The LLEN goes out with the read (no extra round trip).
    const left = entries.length >= REPLY_BATCH ? redis.llen(key) : undefined;
    left?.catch(() => undefined); // awaited below, unless the read fails first
    // In the order announced: an inline record where it came, an id's stored record read back (MGET).
    const slots: (ResultRecord | string)[] = [];
    const ids: string[] = [];
    for (const entry of entries) {
      if (entry[0] !== INLINE_MARK) {
        const id = entry.toString();
        ids.push(id);
        slots.push(id);
        continue;
      }
      const record = inlineRecord(entry);
      // Not a record after all (another program pushed it): whatever it stood for is re-read.
      if (record === undefined) missed = true;
      else slots.push(record);
    }
    const stored = await this.read(redis, ids);
    if (left !== undefined && entries.length + (await left) >= REPLY_MAX) missed = true;
    const records: ResultRecord[] = [];
    const gone: string[] = [];
    let at = 0;
    for (const slot of slots) {
      const record = typeof slot === 'string' ? stored[at++] : slot;
      if (record === undefined) gone.push(slot as string);
      // Not final: a rerun of the job (redelivered) wrote over it; it is announced again when it ends.
      else if (isFinalState(record.state)) records.push(record);
    }
    // REPLY_BATCH is the longest list changeDead-3.lua scans (UNANNOUNCE_SCAN_MAX): a full pop came from a longer one.
    return left === undefined
      ? { records, gone, missed, reconnected }
      : { records, gone, missed, reconnected, backlog: true };
  }

  /**
   * The stored results of `ids`, in order, in MGETs of REPLY_BATCH ids in one
   * pipeline. `jobsOnly`: every id is a job's, so none is looked for among the other records.
   */
  async read(redis: Redis, ids: readonly string[], jobsOnly = false): Promise<(ResultRecord | undefined)[]> {
    if (ids.length === 0) return [];
    const pipe = redis.pipeline();
    for (let i = 0; i < ids.length; i += REPLY_BATCH)
      pipe.mgetBuffer(...ids.slice(i, i + REPLY_BATCH).map((id) => this.keys.result(id)));
    const out: (ResultRecord | undefined)[] = [];
    const prefix = this.keys.result('');
    for (const [err, raws] of (await pipe.exec()) ?? []) {
      if (err) throw err;
      for (const raw of raws as (Buffer | null)[])
        out.push(raw === null ? undefined : decodeResult(raw, prefix, ids[out.length]));
    }
    // A second round trip only for ids without a result (announced ids have one: the usual batch needs none).
    const others = this.others;
    if (jobsOnly || others === undefined) return out;
    const lost = ids.filter((_, i) => out[i] === undefined);
    if (lost.length === 0) return out;
    const more = redis.pipeline();
    for (const id of lost) others.addRead(more, id);
    const replies = (await more.exec()) ?? [];
    let at = 0;
    for (let i = 0; i < out.length; i++) {
      if (out[i] !== undefined) continue;
      const [err, reply] = replies[at] ?? [null, null];
      if (err) throw err;
      out[i] = others.decode(lost[at++] as string, reply);
    }
    return out;
  }
}

/** The final record an inline announcement carries, or undefined when it is not one. */
function inlineRecord(entry: Buffer): ResultRecord | undefined {
  try {
    const record = decodeResult(entry.subarray(1), 'an announcement');
    return typeof record.id === 'string' && isFinalState(record.state) ? record : undefined;
  } catch {
    return undefined;
  }
}

/** Records of ids that are not stored as results (a workflow's outcome), read alongside the results. */
export interface OtherRecords {
  /** Adds the read of `id`'s record to a pipeline (one command). */
  addRead(pipe: ChainableCommander, id: string): void;
  /** Sends the same command alone; resolves with its reply. */
  read(redis: Redis, id: string): Promise<unknown>;
  /** The record in that command's reply, or undefined. */
  decode(id: string, reply: unknown): ResultRecord | undefined;
}
