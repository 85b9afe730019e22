import type { Logger } from 'pino';
import type { BrokerControl, ControlReply, ControlRequest } from '../broker/types.js';
import { messageOf } from '../errors.js';

/** What a node exposes to control requests (the Worker). */
export interface ControlTarget {
  readonly name: string;
  nodeId(): string;
  /** The node's stats (`prefork inspect stats`). */
  stats(): unknown;
  /** The pool's sizing (bad numbers are refused there); each returns the pool's size (or bounds) afterwards. */
  grow(n: number): unknown;
  shrink(n: number): unknown;
  autoscale(max: number, min: number): unknown;
  /** A warm stop, begun after the reply went out. */
  shutdown(): void;
}

/**
 * Runs control requests (`prefork control`, `prefork inspect stats`) on this
 * node and replies to each. A request that fails replies ok: false with the
 * reason; the node itself never fails on one.
 */
export class ControlHandler {
  private readonly startedAt = Date.now();

  constructor(
    private readonly broker: BrokerControl,
    private readonly target: ControlTarget,
    private readonly log: Logger,
  ) {}

  /**
   * Takes this node's requests as soon as the broker says one was posted
   * (the heartbeat would hand them over anyway, up to an interval later).
   * Resolves to the function that stops watching.
   */
  async watch(): Promise<() => Promise<void>> {
    return this.broker.watchControl((nodeId) => {
      if (nodeId !== this.target.nodeId()) return;
      this.broker.takeControl(nodeId).then(
        (requests) => this.handle(requests),
        (err: unknown) => this.log.warn({ err }, 'could not take control requests; the next heartbeat hands them over'),
      );
    });
  }

  handle(requests: readonly ControlRequest[]): void {
    for (const request of requests) void this.run(request);
  }

  private async run(request: ControlRequest): Promise<void> {
    const t = this.target;
    const base = { node: t.name, nodeId: t.nodeId() };
    let reply: ControlReply;
    try {
      reply = { ...base, ok: true, value: this.execute(request) };
    } catch (err) {
      reply = { ...base, ok: false, error: messageOf(err) };
    }
    // `inspect stats` may poll every node every few seconds: only commands that change something log at info.
    this.log[request.command === 'stats' || request.command === 'ping' ? 'debug' : 'info'](
      { command: request.command, args: request.args, requestId: request.id, ok: reply.ok, error: reply.error },
      `control: ${request.command}`,
    );
    try {
      await this.broker.replyControl(request.id, reply);
    } catch (err) {
      this.log.warn({ err, requestId: request.id }, 'could not reply to a control request');
    }
    if (request.command === 'shutdown' && reply.ok) t.shutdown();
  }

  private execute(request: ControlRequest): unknown {
    const t = this.target;
    // The pool checks the numbers itself (an integer >= 1; autoscale's max,min); a missing one is NaN.
    const [a = NaN, b = NaN] = request.args;
    switch (request.command) {
      case 'ping':
        return { pid: process.pid, uptime: (Date.now() - this.startedAt) / 1000 };
      case 'stats':
        return t.stats();
      case 'grow':
        return t.grow(a);
      case 'shrink':
        return t.shrink(a);
      case 'autoscale':
        return t.autoscale(a, b);
      case 'shutdown':
        return { stopping: 'warm' };
    }
  }
}
