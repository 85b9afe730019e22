import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import {
  CONTROL_REPLY_TTL_MS,
  decodeControlReply,
  decodeControlRequests,
  encodeControlReply,
  encodeControlRequest,
} from '../control-codec.js';
import type { ControlReply, ControlRequest } from '../types.js';
import type { BlockingConnection } from './blocking.js';
import type { Keys } from './keys.js';
import { quit } from './connection.js';
import { callScript } from './scripts.js';

/**
 * Control requests to nodes: a LIST per node (`{ns}:ctl:<id>`) that the
 * node's heartbeat empties (only when sendControl flagged its lease, so an
 * idle node pays nothing for it), and a reply LIST per request that the
 * sender blocks on.
 */
export class Control {
  constructor(
    private readonly keys: Keys,
    private readonly log: Logger,
  ) {}

  async send(redis: Redis, nodeIds: readonly string[], request: ControlRequest, ttlMs: number): Promise<string[]> {
    if (nodeIds.length === 0) return [];
    const raw = encodeControlRequest(request);
    const pipe = redis.pipeline();
    for (const id of nodeIds)
      callScript(
        pipe,
        'sendControl',
        [this.keys.nodes, this.keys.control(id)],
        [id, raw, Math.max(1, Math.round(ttlMs)), this.keys.controlWake],
      );
    const replies = (await pipe.exec()) ?? [];
    const posted: string[] = [];
    nodeIds.forEach((id, i) => {
      const [err, n] = replies[i] ?? [null, 0];
      if (err) throw err;
      if (Number(n) === 1) posted.push(id);
    });
    return posted;
  }

  /** Subscribes `conn` (a connection of its own) to the wake channel. */
  async watch(conn: Redis, wake: (nodeId: string) => void, displayUrl: string): Promise<() => Promise<void>> {
    conn.on('message', (channel: string, nodeId: string) => {
      if (channel === this.keys.controlWake) wake(nodeId);
    });
    await conn.subscribe(this.keys.controlWake);
    return async () => {
      await quit(conn, displayUrl);
    };
  }

  async take(redis: Redis, nodeId: string): Promise<ControlRequest[]> {
    const raws = (await callScript(redis, 'takeControl', [this.keys.control(nodeId)], [])) as Buffer[];
    return decodeControlRequests(raws, this.log);
  }

  async reply(redis: Redis, requestId: string, reply: ControlReply): Promise<void> {
    const key = this.keys.controlReply(requestId);
    await redis.multi().rpush(key, encodeControlReply(reply)).pexpire(key, CONTROL_REPLY_TTL_MS).exec();
  }

  async waitForReplies(
    blocking: BlockingConnection,
    requestId: string,
    count: number,
    timeoutMs: number,
  ): Promise<ControlReply[]> {
    const key = this.keys.controlReply(requestId);
    const deadline = Date.now() + timeoutMs;
    const out: ControlReply[] = [];
    while (out.length < count) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      const popped = await blocking.block(
        (conn, ms) =>
          conn.call('BLMPOP', (ms / 1000).toFixed(3), 1, key, 'LEFT', 'COUNT', count - out.length) as Promise<
            [string, string[]] | null
          >,
        remaining,
      );
      if (popped === null) break;
      for (const raw of popped[1]) {
        const reply = decodeControlReply(raw);
        if (reply !== undefined) out.push(reply);
      }
    }
    return out;
  }
}
