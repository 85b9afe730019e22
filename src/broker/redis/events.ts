import type { ChainableCommander, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { EventBatch } from '../../events/event-batch.js';
import type { NodeEvent } from '../../events/node-event.js';
import { decodeEvents, encodeEvents } from '../event-codec.js';
import type { EventCarrier, EventPage } from '../types.js';
import type { BlockingPool } from './blocking-pool.js';
import type { Keys } from './keys.js';
import { isWrongType, namedRefusal, refusal } from './reply-errors.js';

/** Entries read per call while following. */
const READ_COUNT = 100;
/** The position before any entry. */
const START = '0-0';

type Entries = [Buffer, Buffer[] | null][];

/** Events a pipeline carries: the batches, and the index of the first one's XADD. */
export interface CarriedEvents {
  readonly batches: readonly EventBatch[];
  readonly from: number;
}

/**
 * The events stream `{ns}:events`: one entry per write of a node (field `e`,
 * msgpack of its events), capped at about `maxLen` entries (XADD MAXLEN ~,
 * trimmed by whole nodes of the stream: cheap). A node's events ride in the
 * pipeline of its fetch or settlement (addWrite): one more command per
 * batch, no round trip.
 */
export class Events {
  private carrier: EventCarrier | undefined;

  constructor(
    private readonly keys: Keys,
    private readonly maxLen: number,
    private readonly log: Logger,
  ) {}

  carry(carrier: EventCarrier): void {
    this.carrier = carrier;
  }

  /**
   * Adds the held events, if any, to a pipeline the node sends anyway, an
   * XADD per batch, after every other command (their replies keep their
   * places). The caller then says how it went: written().
   */
  addWrite(pipe: ChainableCommander): CarriedEvents | undefined {
    const batches = this.carrier?.take() ?? [];
    if (batches.length === 0) return undefined;
    const from = pipe.length;
    for (const batch of batches) this.add(pipe, batch);
    return { batches, from };
  }

  /**
   * After the pipeline: the batches whose XADD failed, or all of them when
   * the pipeline did (`replies` undefined, `failure` what it failed with),
   * go back to the carrier with the reason.
   */
  written(
    carried: CarriedEvents | undefined,
    replies: readonly [Error | null, unknown][] | undefined,
    failure?: unknown,
  ): void {
    if (carried === undefined || this.carrier === undefined) return;
    const failed = carried.batches.filter((_, i) => replies === undefined || replies[carried.from + i]?.[0] !== null);
    if (failed.length === 0) return this.carrier.carried();
    const reason = replies === undefined ? failure : replies.slice(carried.from).find(([err]) => err !== null)?.[0];
    this.carrier.putBack(failed, reason === undefined ? undefined : this.refusedWrite(reason));
  }

  async publish(redis: Redis, batch: EventBatch): Promise<void> {
    if (batch.items.length === 0) return;
    const pipe = redis.pipeline();
    this.add(pipe, batch);
    const [reply] = (await pipe.exec()) ?? [];
    if (reply?.[0]) throw await this.refused(redis, 'the write of the events', reply[0]);
  }

  async recent(redis: Redis, count: number): Promise<EventPage> {
    try {
      return await this.recentFrom(redis, count);
    } catch (err) {
      throw await this.refused(redis, 'the read of the events', err);
    }
  }

  private async recentFrom(redis: Redis, count: number): Promise<EventPage> {
    if (count <= 0) {
      const last = (await redis.xrevrangeBuffer(this.keys.events, '+', '-', 'COUNT', 1)) as Entries;
      return { events: [], position: last[0]?.[0].toString() ?? START };
    }
    // Newest first, entry by entry, until `count` events (entries hold many); each decoded once, kept as decoded.
    const entries: Entries = [];
    const decoded: NodeEvent[][] = [];
    let events = 0;
    let end = '+';
    while (events < count) {
      const page = (await redis.xrevrangeBuffer(this.keys.events, end, '-', 'COUNT', READ_COUNT)) as Entries;
      for (const entry of page) {
        const those = this.decode(entry);
        entries.push(entry);
        decoded.push(those);
        events += those.length;
        if (events >= count) break;
      }
      if (page.length < READ_COUNT) break;
      end = `(${(page[page.length - 1] as [Buffer, unknown])[0].toString()}`;
    }
    entries.reverse();
    const out = decoded.reverse().flat();
    return { events: out.slice(Math.max(0, out.length - count)), position: positionAfter(entries, START) };
  }

  async read(
    redis: Redis,
    blocking: BlockingPool,
    position: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<EventPage> {
    const key = this.keys.events;
    let reply: [Buffer, Entries][] | null;
    try {
      reply =
        timeoutMs <= 0
          ? await redis.xreadBuffer('COUNT', READ_COUNT, 'STREAMS', key, position)
          : await blocking.block(
              (conn, ms) =>
                conn.xreadBuffer('COUNT', READ_COUNT, 'BLOCK', ms, 'STREAMS', key, position) as Promise<
                  [Buffer, Entries][] | null
                >,
              timeoutMs,
              signal,
            );
    } catch (err) {
      throw await this.refused(redis, 'the read of the events', err);
    }
    const entries = reply?.[0]?.[1] ?? [];
    return { events: entries.flatMap((e) => this.decode(e)), position: positionAfter(entries, position) };
  }

  /**
   * A refusal as the Broker contract has it (BrokerRefusedError; a lost
   * connection is left as is), naming for WRONGTYPE what the stream's key
   * holds: Redis's reply does not say which key (another program wrote it).
   */
  private refused(redis: Redis, what: string, err: unknown): Promise<unknown> {
    return namedRefusal(redis, what, err, [[this.keys.events, 'stream']]);
  }

  /** refused() for a write of a node's pipeline, told after it failed (no look at the key: only the drop warning says it). */
  private refusedWrite(err: unknown): unknown {
    return refusal('the write of the events', err, isWrongType(err) ? ` (${this.keys.events} is not a stream)` : '');
  }

  private add(pipe: ChainableCommander, batch: EventBatch): void {
    pipe.xadd(this.keys.events, 'MAXLEN', '~', this.maxLen, '*', 'e', encodeEvents(batch));
  }

  private decode([id, fields]: [Buffer, Buffer[] | null]): NodeEvent[] {
    const raw = fields?.[1];
    if (fields?.[0]?.toString() !== 'e' || raw === undefined) {
      this.log.debug({ entry: id.toString() }, 'skipped an events entry that is not one');
      return [];
    }
    const { events, skipped } = decodeEvents(raw);
    if (skipped > 0) this.log.debug({ entry: id.toString(), skipped }, 'skipped what is not an event');
    return events;
  }
}

function positionAfter(entries: Entries, otherwise: string): string {
  const last = entries[entries.length - 1];
  return last === undefined ? otherwise : last[0].toString();
}
