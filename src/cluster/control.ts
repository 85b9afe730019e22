import type { Logger } from 'pino';
import type { BrokerControl, ControlCommand, ControlReply, ControlRequest, RevokeOptions } from '../broker/types.js';
import { LEADER_RELEASED } from '../broker/control-codec.js';
import { OptionError, messageOf } from '../errors.js';
import { checkQueueName, isJobId, throwOptionError } from '../job-option-checks.js';
import type { PauseScope } from './pauses.js';

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
  /** The jobs running in the children (`prefork inspect active`), or fetched and not started (`inspect reserved`). */
  jobs(which: 'active' | 'reserved'): unknown;
  /** The tasks the node's module defines (`prefork inspect registered`). */
  registered(): unknown;
  /** Follows a task's rate set at run time ("100/s" or "off"; a bad one is refused there). */
  rateLimit(task: string, rate: string): unknown;
  /** A warm stop, begun after the reply went out. */
  shutdown(): void;
  /** Jobs revoked (remembered until `expiresAt`, epoch ms): skipped, or stopped while running with `terminate`. */
  revoke(ids: string[], options: RevokeOptions, expiresAt: number): unknown;
  /** Stop or start fetching from a queue (its pause is already remembered in the broker); each returns the queues paused afterwards. */
  pause(queue: string, scope: PauseScope): unknown;
  resume(queue: string, scope: PauseScope): unknown;
  /** The leader lease was released (its holder left): a node that stands for leader beats now to take it. */
  leaderReleased?(): void;
}

/** Commands that only read: logged at debug (`inspect` may poll every node every few seconds). */
const QUIET_COMMANDS: ReadonlySet<ControlCommand> = new Set(['ping', 'stats', 'active', 'reserved', 'registered']);

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
      if (nodeId === LEADER_RELEASED) this.target.leaderReleased?.();
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
    this.log[QUIET_COMMANDS.has(request.command) ? 'debug' : 'info'](
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
    switch (request.command) {
      case 'ping':
        return { pid: process.pid, uptime: (Date.now() - this.startedAt) / 1000 };
      case 'stats':
        return t.stats();
      case 'grow':
        return t.grow(numbers(request)[0] ?? NaN);
      case 'shrink':
        return t.shrink(numbers(request)[0] ?? NaN);
      case 'autoscale': {
        const [max = NaN, min = NaN] = numbers(request);
        return t.autoscale(max, min);
      }
      case 'revoke':
        return revoke(t, request.args);
      case 'active':
      case 'reserved':
        return t.jobs(request.command);
      case 'registered':
        return t.registered();
      case 'pause':
      case 'resume': {
        const [queue, scope] = pauseArgs(request.command, request.args);
        return request.command === 'pause' ? t.pause(queue, scope) : t.resume(queue, scope);
      }
      case 'rate-limit':
        return rateLimit(t, request.args);
      case 'shutdown':
        return { stopping: 'warm' };
    }
  }
}

/** The arguments of a command that takes numbers; the pool checks their values (a missing one is NaN there). */
function numbers(request: ControlRequest): number[] {
  return request.args.map((v, i) => {
    if (typeof v !== 'number') throw new OptionError(`args[${i}]`, v, 'a number', `control ${request.command}`);
    return v;
  });
}

/** revoke's arguments: [terminate (0|1), grace ms, expiresAt epoch ms, job id, ...]. */
function revoke(target: ControlTarget, args: readonly (string | number)[]): unknown {
  const [terminate, grace, expiresAt, ...ids] = args;
  if (terminate !== 0 && terminate !== 1) throw new OptionError('terminate', terminate, '0 or 1', 'control revoke');
  if (typeof grace !== 'number' || !Number.isSafeInteger(grace) || grace < 0)
    throw new OptionError('grace', grace, 'whole ms >= 0', 'control revoke');
  if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt))
    throw new OptionError('expiresAt', expiresAt, 'epoch ms', 'control revoke');
  const bad = ids.find((id) => !isJobId(id));
  if (ids.length === 0 || bad !== undefined)
    throw new OptionError('ids', bad, 'job ids (non-empty strings)', 'control revoke');
  return target.revoke(ids as string[], { terminate: terminate === 1, grace }, expiresAt);
}

/** pause and resume take [queue, 'all' | 'node']. */
function pauseArgs(command: 'pause' | 'resume', args: readonly (string | number)[]): [string, PauseScope] {
  const [queue, scope] = args;
  checkQueueName('queue', queue, throwOptionError);
  if (scope !== 'all' && scope !== 'node')
    throw new OptionError('scope', scope, `'all' or 'node'`, `control ${command}`);
  return [queue as string, scope];
}

/** rate-limit's arguments: [task, rate or "off"]; the node checks the rate itself. */
function rateLimit(target: ControlTarget, args: readonly (string | number)[]): unknown {
  const [task, rate] = args;
  if (typeof task !== 'string' || task === '') throw new OptionError('task', task, 'a task name', 'control rate-limit');
  if (typeof rate !== 'string')
    throw new OptionError('rate', rate, 'a rate like "100/s", or "off"', 'control rate-limit');
  return target.rateLimit(task, rate);
}
