import type { ChainableCommander, Redis } from 'ioredis';
import type { ResultRecord, Settlement } from '../types.js';
import type { BlockingConnection } from './blocking.js';
import { decodeResult, encodeResult } from './entry-codec.js';
import type { Keys } from './keys.js';

/** Most ids taken from a reply list per wake-up. */
const REPLY_BATCH = 1000;
/**
 * Most ids a reply list keeps (the oldest go first): a client that enqueues
 * and never waits costs a bounded list. A read that may have missed dropped
 * ids re-reads its caller's pending results (see waitFor).
 */
const REPLY_MAX = 10_000;

/**
 * Results: `SET <ns>:res:<id>` (msgpack, with the result TTL) written in the
 * same round trip as the settlement script, and for a final state the job id
 * pushed to the waiting client's reply list. A client blocks on its own list
 * (BLMPOP) and MGETs what arrived: no subscription per job, nothing polled.
 */
export class Results {
  constructor(
    private readonly keys: Keys,
    private readonly ttlMs: number,
  ) {}

  /**
   * Adds the result writes of a batch to a pipeline, in settlement order (a
   * STARTED record before the same job's final one). Ids announced to a
   * waiting client go in one LPUSH + LTRIM + PEXPIRE per reply list, after
   * the SETs (a woken client MGETs them), instead of commands per job.
   */
  addWrites(
    pipe: ChainableCommander,
    settlements: readonly { kind: string; delivery: Settlement['delivery']; result?: ResultRecord | undefined }[],
  ): void {
    let replies: Map<string, string[]> | undefined;
    for (const s of settlements) {
      if (s.kind === 'giveBack' || s.kind === 'release' || s.result === undefined) continue;
      const { job } = s.delivery;
      if (job.options.ignoreResult === true) continue;
      pipe.set(this.keys.result(s.result.id), encodeResult(s.result), 'PX', this.ttlMs);
      if (job.replyTo === undefined || (s.result.state !== 'SUCCESS' && s.result.state !== 'FAILURE')) continue;
      replies ??= new Map();
      const ids = replies.get(job.replyTo);
      if (ids === undefined) replies.set(job.replyTo, [s.result.id]);
      else ids.push(s.result.id);
    }
    if (replies === undefined) return;
    for (const [clientId, ids] of replies) {
      const reply = this.keys.reply(clientId);
      pipe.lpush(reply, ...ids);
      pipe.ltrim(reply, 0, REPLY_MAX - 1);
      pipe.pexpire(reply, this.ttlMs);
    }
  }

  async get(redis: Redis, id: string): Promise<ResultRecord | undefined> {
    const raw = await redis.getBuffer(this.keys.result(id));
    return raw === null ? undefined : decodeResult(raw);
  }

  async waitFor(
    redis: Redis,
    blocking: BlockingConnection,
    clientId: string,
    timeoutMs: number,
    pending?: () => Iterable<string>,
  ): Promise<ResultRecord[]> {
    const key = this.keys.reply(clientId);
    const popped = await blocking.block(
      (conn, ms) =>
        conn.call('BLMPOP', (ms / 1000).toFixed(3), 1, key, 'RIGHT', 'COUNT', REPLY_BATCH) as Promise<
          [string, string[]] | null
        >,
      timeoutMs,
    );
    if (popped === null) return [];
    const ids = popped[1];
    if (ids.length === 0) return [];
    // The overflow signal: LTRIM drops ids only from a list at REPLY_MAX, and
    // only this reader shrinks it, so the first pop after any drop came from a
    // list of at least REPLY_MAX ids (those popped plus those left; pushes
    // since only add). A full batch from a shorter list is only a backlog:
    // re-reading every pending id then would cost a read of all of them per
    // batch. The LLEN goes out with the read (no extra round trip).
    const left = pending !== undefined && ids.length >= REPLY_BATCH ? redis.llen(key) : undefined;
    left?.catch(() => undefined); // awaited below, unless the read fails first
    const out = await this.read(redis, ids, false);
    // Then what the caller still waits for is re-read (results are SET before their id is pushed).
    if (pending !== undefined && left !== undefined && ids.length + (await left) >= REPLY_MAX)
      out.push(...(await this.read(redis, [...pending()], true)));
    return out;
  }

  /** The stored results of `ids` (only final ones when `finalOnly`), in MGETs of REPLY_BATCH ids in one pipeline. */
  private async read(redis: Redis, ids: readonly string[], finalOnly: boolean): Promise<ResultRecord[]> {
    if (ids.length === 0) return [];
    const pipe = redis.pipeline();
    for (let i = 0; i < ids.length; i += REPLY_BATCH)
      pipe.mgetBuffer(...ids.slice(i, i + REPLY_BATCH).map((id) => this.keys.result(id)));
    const out: ResultRecord[] = [];
    for (const [err, raws] of (await pipe.exec()) ?? []) {
      if (err) throw err;
      for (const raw of raws as (Buffer | null)[]) {
        if (raw === null) continue;
        const record = decodeResult(raw);
        if (!finalOnly || record.state === 'SUCCESS' || record.state === 'FAILURE') out.push(record);
      }
    }
    return out;
  }
}
