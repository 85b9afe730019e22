import { BrokerClosedError } from '../../errors.js';
import type { BlockingCall, BlockingConnection } from './blocking.js';

/**
 * Blocking connections lent out one block at a time, for reads that
 * several callers make at once on one broker object: two Clients sharing
 * it each wait for their results, a Client follows the events twice. On one
 * connection their blocks would queue in Redis, each waiting out the
 * block ahead of it: a result sat unread for a whole block, and the block
 * behind outlived its watchdog, which then replaced the connection. One
 * caller alone always gets the same connection back (the last one idle).
 */
export class BlockingPool {
  private readonly all: BlockingConnection[] = [];
  private readonly idle: BlockingConnection[] = [];
  private closed = false;

  constructor(private readonly open: () => BlockingConnection) {}

  /**
   * Times any of its connections was replaced (BlockingConnection.replacements):
   * a reader that compares it before and after learns of any reply lost, on
   * whichever connection it blocked.
   */
  get replacements(): number {
    return this.all.reduce((n, conn) => n + conn.replacements, 0);
  }

  /** BlockingConnection.block, on a connection no other block uses meanwhile. */
  async block<T>(
    call: BlockingCall<T>,
    timeoutMs: number,
    signal?: AbortSignal,
    endWhenLost = false,
  ): Promise<T | null> {
    if (this.closed) throw new BrokerClosedError();
    const conn = this.idle.pop() ?? this.add();
    try {
      return await conn.block(call, timeoutMs, signal, endWhenLost);
    } finally {
      if (!this.closed) this.idle.push(conn);
    }
  }

  close(): Promise<void> {
    this.closed = true;
    this.idle.length = 0;
    return Promise.all(this.all.map((conn) => conn.close())).then(() => undefined);
  }

  private add(): BlockingConnection {
    const conn = this.open();
    this.all.push(conn);
    return conn;
  }
}
