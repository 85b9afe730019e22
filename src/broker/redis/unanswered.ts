import type { Command, Redis } from 'ioredis';
import { ioredis } from './ioredis-module.js';
import { BrokerTimeoutError, BrokerUnavailableError, MAY_HAVE_BEEN_APPLIED } from '../../errors.js';
import { scriptNameOf } from './scripts.js';

/**
 * Commands Redis did not answer, on a command connection: those a closing
 * connection sent (failUnanswered), and those Redis left unanswered for
 * longer than the connection's bound (AnswerBound). Both fail saying that
 * what was sent may or may not have been applied.
 */

/** What a timer may be early by against performance.now(): Node arms timers on the loop's cached clock. */
const TIMER_SLACK_MS = 1;

/**
 * Fails the commands a closing command connection sent and got no reply
 * for, rather than letting ioredis send them again once it reconnects
 * (autoResendUnfulfilledCommands): Redis may have run them before the
 * reply was lost, and an enqueue run twice adds its jobs twice. Callers see
 * an error instead: the broker's callers retry what is safe to run again,
 * and an enqueue's caller learns that its jobs may or may not be queued.
 * Runs on the 'close' event, after ioredis set those commands aside to
 * re-send and before the reconnect: emptying the queue they are in leaves
 * nothing to re-send.
 */
export function failUnanswered(redis: Redis, displayUrl: string): void {
  const own = redis as unknown as {
    commandQueue: { length: number; toArray(): { command: { promise?: Promise<unknown> } }[] };
    flushQueue(err: Error, options: { offlineQueue: boolean; commandQueue: boolean }): void;
  };
  if (own.commandQueue.length === 0) return;
  // One nobody awaits (sent and not waited for) must not become an unhandled rejection, which
  // ends a Node process by default; whoever awaits one still gets the error.
  for (const item of own.commandQueue.toArray()) item.command.promise?.catch(() => undefined);
  own.flushQueue(
    new BrokerUnavailableError(displayUrl, `the connection closed before Redis answered: ${MAY_HAVE_BEEN_APPLIED}`),
    { offlineQueue: false, commandQueue: true },
  );
}

/** Each bounded connection's bound. */
const bounds = new WeakMap<Redis, AnswerBound>();

/** A command timed by an AnswerBound. */
interface Timed {
  command: Command;
  sentAt: number;
  /** Answered, failed or timed out: nothing more to time. */
  done: boolean;
}

/**
 * The bound on a command connection (the broker's `commandTimeout`): a
 * command fails with BrokerTimeoutError once Redis has sent nothing on the
 * connection for the bound since the command was sent. Counted from
 * Redis's last reply, so a Redis working through a long pipeline (a large
 * enqueueMany, answered command by command) is busy, not silent. Commands
 * offline (queued while the connection is down) are timed from when they
 * were queued; the handshake of a connection is not timed (open() bounds a
 * connect, and a reconnect's is no caller's).
 *
 * One timer per connection, not one per command (a timer per call cost a
 * single enqueue about 5% of its rate): Redis answers in order, so the
 * oldest command waiting is the first to run out; the timer is armed for
 * it and, when it fires, fails every command whose time is up and waits
 * for the next.
 *
 * A timed-out command stays in ioredis's queue of commands sent, and the
 * connection stays open: if Redis resumes, the late reply is matched to the
 * command it answers and dropped (its promise has settled), so no later
 * command is handed another's reply.
 */
export class AnswerBound {
  /** Timed commands in the order sent; answered ones are dropped from the front as they go. */
  private readonly queue: Timed[] = [];
  /** Commands that timed out and whose late reply has not come (nor the connection closed). */
  private overdue = 0;
  /** When Redis last sent anything (performance.now()), noted while timed commands wait. */
  private answeredAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly timed = new WeakSet<Command>();

  constructor(
    private readonly redis: Redis,
    private readonly displayUrl: string,
    private readonly ms: number,
  ) {
    bounds.set(redis, this);
    // A new socket for each connect and reconnect: listen to each one's bytes.
    redis.on('connect', () =>
      redis.stream.on('data', () => {
        if (this.queue.length > 0) this.answeredAt = performance.now();
      }),
    );
  }

  /** True while a command that timed out still waits for its late reply. */
  owesReplies(): boolean {
    return this.overdue > 0;
  }

  /** Times `command`; called before ioredis sends it (or queues it offline). */
  watch(command: Command): void {
    // Once: a command queued offline passes here again when the queue is sent.
    if (this.timed.has(command)) return;
    // ioredis's own set-up of a connection, sent while it is at 'connect' (a caller's command then waits offline).
    if (this.redis.status === 'connect' && ioredis().Command.checkFlag('HANDSHAKE_COMMANDS', command.name)) return;
    this.timed.add(command);
    const entry: Timed = { command, sentAt: performance.now(), done: false };
    this.queue.push(entry);
    let late = false;
    const { resolve, reject } = command;
    // Called by the reply (or the failure) of the command, and by its late reply after a timeout.
    const finish = (): void => {
      if (late) {
        late = false;
        this.overdue--;
      }
      if (entry.done) return;
      entry.done = true;
      this.dropAnswered();
    };
    command.resolve = (value: unknown) => {
      finish();
      return resolve.call(command, value);
    };
    command.reject = (err: Error) => {
      if (err instanceof BrokerTimeoutError && !entry.done) {
        // Timed out (check()): its reply, or the close that fails it, is still to come.
        entry.done = true;
        late = true;
        this.overdue++;
      } else finish();
      reject.call(command, err);
    };
    if (this.timer === undefined) this.arm(this.ms);
  }

  /** Unref'd: a command waiting keeps its socket, and so the process, alive; an idle connection's timer must not. */
  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), ms);
    this.timer.unref();
  }

  private dropAnswered(): void {
    while (this.queue.length > 0 && (this.queue[0] as Timed).done) this.queue.shift();
  }

  /** Fails the commands whose time is up, then waits for the oldest one left. */
  private check(): void {
    this.timer = undefined;
    this.dropAnswered();
    const now = performance.now();
    for (const entry of this.queue) {
      if (entry.done) continue;
      const silent = now - Math.max(entry.sentAt, this.answeredAt);
      // Sent later, or Redis spoke since: this one and those after it still have time.
      if (silent + TIMER_SLACK_MS < this.ms) {
        this.arm(this.ms - silent);
        break;
      }
      entry.command.reject(new BrokerTimeoutError(this.displayUrl, describe(entry.command), this.ms));
    }
    this.dropAnswered();
  }
}

/**
 * True while Redis owes `redis` the reply of a command that timed out: a
 * command sent now would queue behind it in Redis, so a QUIT would only time
 * out in turn (close the socket instead).
 */
export function owesLateReplies(redis: Redis): boolean {
  return bounds.get(redis)?.owesReplies() === true;
}

/** A command as a message names it: a script by its name, else the command's. */
function describe(command: Command): string {
  const name = command.name.toLowerCase();
  const script = name === 'evalsha' || name === 'eval' ? scriptNameOf(command.args[0]) : undefined;
  return script === undefined ? `the command ${name.toUpperCase()}` : `the script ${script}`;
}
