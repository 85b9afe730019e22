import type { ChainableCommander, Redis } from 'ioredis';
import { isFinalState } from '../job-state.js';
import type { AnnouncedResults, ResultRecord, Settlement } from '../types.js';
import type { BlockingConnection } from './blocking.js';
import { decodeResult, encodeResult } from './entry-codec.js';
import type { Keys } from './keys.js';
import { callScript } from './scripts.js';
import { resultTtlOf } from '../../job-option-checks.js';

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
/** Clients whose last read this broker remembers (the oldest are forgotten: their next read says `missed`). */
const CLIENTS_TRACKED = 1_000;

/**
 * Results: `<ns>:res:<id>` (msgpack, with the job's result TTL, else the
 * broker's), a batch's written by one script (storeResults) in the same
 * round trip as the settlement script, and for a final state the job id
 * pushed to the waiting client's reply list. A client blocks on its own list
 * (BLMPOP) and MGETs what arrived: no subscription per job, nothing polled.
 */
export class Results {
  /** Per client: the blocking connection's replacements when its last read ended. */
  private readonly replacementsSeen = new Map<string, number>();
  /** Per client: ids announced since this broker last trimmed its reply list (the oldest clients forgotten: trimmed again). */
  private readonly untrimmed = new Map<string, number>();
  /** Where records not stored as results are also looked for (workflows' outcomes). */
  others: OtherRecords | undefined;

  constructor(
    private readonly keys: Keys,
    /** How long results are kept unless a job says otherwise. */
    readonly ttlMs: number,
  ) {}

  /**
   * Adds the result writes of a batch to a pipeline: one storeResults call
   * that stores them in settlement order (a STARTED record before the same
   * job's final one). Ids announced to a waiting client go in one LPUSH +
   * PEXPIRE per reply list (and an LTRIM now and then: addAnnouncement),
   * after the results (a woken client MGETs them), not commands per job.
   */
  addWrites(
    pipe: ChainableCommander,
    settlements: readonly { kind: string; delivery: Settlement['delivery']; result?: ResultRecord | undefined }[],
  ): void {
    let replies: Map<string, string[]> | undefined;
    const keys: string[] = [];
    const args: (number | Buffer)[] = [];
    for (const s of settlements) {
      if (s.kind === 'giveBack' || s.kind === 'defer' || s.kind === 'release' || s.result === undefined) continue;
      const { job } = s.delivery;
      if (job.options.ignoreResult === true) continue;
      keys.push(this.keys.result(s.result.id));
      args.push(resultTtlOf(job.options, this.ttlMs), encodeResult(s.result));
      if (job.replyTo === undefined || !isFinalState(s.result.state)) continue;
      replies ??= new Map();
      const ids = replies.get(job.replyTo);
      if (ids === undefined) replies.set(job.replyTo, [s.result.id]);
      else ids.push(s.result.id);
    }
    if (keys.length > 0) callScript(pipe, 'storeResults', keys, args);
    if (replies === undefined) return;
    for (const [clientId, ids] of replies) this.addAnnouncement(pipe, clientId, ids);
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
    if (raw !== null) return decodeResult(raw);
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
    blocking: BlockingConnection,
    clientId: string,
    timeoutMs: number,
  ): Promise<AnnouncedResults> {
    const key = this.keys.reply(clientId);
    const before = this.replacementsSeen.get(clientId);
    const popped = await blocking.block(
      (conn, ms) =>
        conn.call('BLMPOP', (ms / 1000).toFixed(3), 1, key, 'RIGHT', 'COUNT', REPLY_BATCH) as Promise<
          [string, string[]] | null
        >,
      timeoutMs,
      undefined,
      true,
    );
    const now = blocking.replacements;
    this.replacementsSeen.delete(clientId);
    if (this.replacementsSeen.size >= CLIENTS_TRACKED)
      this.replacementsSeen.delete(this.replacementsSeen.keys().next().value as string);
    this.replacementsSeen.set(clientId, now);
    // A client not seen before (or forgotten) may have missed one too.
    let missed = before === undefined ? now > 0 : now !== before;
    const ids = popped?.[1] ?? [];
    if (ids.length === 0) return { records: [], gone: [], missed };
    // Overflow: a pop from a list of REPLY_MAX ids or more (docs/architecture.md,
    // "A client"). The LLEN goes out with the read (no extra round trip).
    const left = ids.length >= REPLY_BATCH ? redis.llen(key) : undefined;
    left?.catch(() => undefined); // awaited below, unless the read fails first
    const stored = await this.read(redis, ids);
    if (left !== undefined && ids.length + (await left) >= REPLY_MAX) missed = true;
    const records: ResultRecord[] = [];
    const gone: string[] = [];
    stored.forEach((record, i) => {
      if (record === undefined) gone.push(ids[i] as string);
      // Not final: a rerun of the job (redelivered) wrote over it; it is announced again when it ends.
      else if (isFinalState(record.state)) records.push(record);
    });
    return { records, gone, missed };
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
    for (const [err, raws] of (await pipe.exec()) ?? []) {
      if (err) throw err;
      for (const raw of raws as (Buffer | null)[]) out.push(raw === null ? undefined : decodeResult(raw));
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

/** Records of ids that are not stored as results (a workflow's outcome), read alongside the results. */
export interface OtherRecords {
  /** Adds the read of `id`'s record to a pipeline (one command). */
  addRead(pipe: ChainableCommander, id: string): void;
  /** Sends the same command alone; resolves with its reply. */
  read(redis: Redis, id: string): Promise<unknown>;
  /** The record in that command's reply, or undefined. */
  decode(id: string, reply: unknown): ResultRecord | undefined;
}
