import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { InvalidStateError } from '../../errors.js';
import { decodeControlRequests } from '../control-codec.js';
import type { HeartbeatReply, LeaderLease, NodeInfo, NodeUpdate } from '../types.js';
import type { Keys } from './keys.js';
import type { Results } from './results.js';
import { workflowOfMeta } from './entry-codec.js';
import type { Workflows } from './workflows.js';
import { callScript, onLocalClock, serverMs } from './scripts.js';
import { refusal } from './reply-errors.js';

/** Pending entries moved per recovery script call (keeps each script short). */
const RECOVER_BATCH = 200;
/** Expired nodes reported per heartbeat. */
const EXPIRED_REPORT = 5;
/** Rounds of recover-then-finish before giving up (a zombie still reading under the dead id). */
const FINISH_ROUNDS = 5;
/**
 * Every this many heartbeats (the first included) also looks for recoveries
 * whose recoverer died (rare) and at the delayed sets (timer markers wake a
 * node when a delayed job comes first; this is the fallback): a ZRANGE
 * each, saved on the other beats.
 */
const FULL_BEAT_EVERY = 4;
/**
 * Every this many heartbeats (about 5 minutes at the default lease) also
 * sweeps the node's streams for orphans (heartbeat-n.lua): reservations
 * nobody would recover, left by rare accidents, so seldom is soon enough
 * and an idle node's cost stays flat.
 */
const SWEEP_EVERY = 32;
/** Leases a consumer must have been idle before a sweep takes it for an orphan: a fenced node that keeps its jobs moves them to its new id well before (register's adoptFrom). */
const ORPHAN_IDLE_LEASES = 2;

/**
 * Cluster membership as leases: a node's deadline in `{ns}:nodes`, renewed by
 * heartbeats; a node whose lease expired has its reserved entries moved back
 * to its queues by whoever is told of it, guarded by `{ns}:recovering` so a
 * recoverer that dies is retried by another.
 */
export class Membership {
  private beats = 0;

  constructor(
    private readonly keys: Keys,
    private readonly leaseMs: number,
    private readonly deadMax: number,
    private readonly log: Logger,
    private readonly workflows: Workflows,
    private readonly results: Results,
  ) {}

  /** Registers `node`; with `adoptFrom`, then moves what that old id still reserves to it (adoptEntries-n.lua). Returns how many moved. */
  async register(redis: Redis, node: NodeInfo, adoptFrom?: string): Promise<number> {
    const info: Record<string, string> = {
      name: node.name,
      host: node.host,
      pid: String(node.pid),
      queues: JSON.stringify(node.queues),
      concurrency: node.concurrency,
      startedAt: String(node.startedAt),
    };
    if (node.schedule !== undefined) info.schedule = JSON.stringify(node.schedule);
    const pairs = Object.entries(info).flat();
    await callScript(
      redis,
      'registerNode',
      [this.keys.nodes, this.keys.node(node.id), this.keys.queues],
      [node.id, this.leaseMs, pairs.length / 2, ...pairs, ...node.queues],
    );
    if (adoptFrom === undefined) return 0;
    const streams = node.queues.flatMap((q) => [this.keys.stream(q), this.keys.rd(q)]);
    const moved = Number(
      await callScript(
        redis,
        'adoptEntries',
        [this.keys.nodes, this.keys.node(adoptFrom), ...streams],
        [adoptFrom, node.id],
      ),
    );
    return Math.max(0, moved);
  }

  /** Changes a live node's description; false when the node is not live (nothing is written). */
  async update(redis: Redis, nodeId: string, update: NodeUpdate): Promise<boolean> {
    const pairs: string[] = [];
    if (update.concurrency !== undefined) pairs.push('concurrency', update.concurrency);
    if (pairs.length === 0) return true;
    const done = await callScript(redis, 'updateNode', [this.keys.nodes, this.keys.node(nodeId)], [nodeId, ...pairs]);
    return Number(done) === 1;
  }

  async heartbeat(redis: Redis, nodeId: string, queues: readonly string[], lead = false): Promise<HeartbeatReply> {
    const beat = this.beats++;
    const full = beat % FULL_BEAT_EVERY === 0;
    const keys = [this.keys.nodes, this.keys.recovering, this.keys.control(nodeId)];
    if (lead) keys.push(this.keys.leader);
    if (full) for (const q of queues) keys.push(this.keys.delayed(q));
    const args: (string | number)[] = [nodeId, this.leaseMs, EXPIRED_REPORT, full ? '1' : '0', lead ? '1' : '0'];
    if (beat % SWEEP_EVERY === SWEEP_EVERY - 1) {
      for (const q of queues) keys.push(this.keys.stream(q), this.keys.rd(q));
      args.push(2 * queues.length, ORPHAN_IDLE_LEASES * this.leaseMs);
    }
    const [fenced, expired, nextDue, brokerNow, nextExpiry, control, leader, lapsed, posted] = (await callScript(
      redis,
      'heartbeat',
      keys,
      args,
    )) as [number, Buffer[], number, number, number, Buffer[], [Buffer, number] | [], number, number];
    const reply: HeartbeatReply = {
      fenced: fenced === 1,
      expired: expired.map((b) => b.toString()),
      nextDueAt: onLocalClock(nextDue, brokerNow),
      nextExpiryAt: onLocalClock(nextExpiry, brokerNow),
      control: decodeControlRequests(control, this.log),
    };
    if (leader.length === 2) reply.leader = { nodeId: leader[0].toString(), token: leader[1] };
    if (lapsed > 0) reply.lapsedMs = lapsed;
    if (posted === 1) reply.controlPosted = true;
    return reply;
  }

  /** The leader lease's holder and fencing token, while the lease is live (by the server's clock). */
  async leader(redis: Redis): Promise<LeaderLease | undefined> {
    const [[timeErr, time], [leaseErr, lease]] = ((await redis
      .pipeline()
      .time()
      .hmget(this.keys.leader, 'node', 'token', 'until')
      .exec()) ?? []) as [[Error | null, [string, string]], [Error | null, (string | null)[]]];
    // A pipeline resolves with each command's error: unread, a refused HMGET was a TypeError naming nothing.
    if (timeErr) throw timeErr;
    if (leaseErr) throw refusal('the read of the leader lease', leaseErr, ` (${this.keys.leader} is not a hash)`);
    const now = serverMs(time);
    const [node, token, until] = lease;
    if (node == null || until == null || Number(until) < now) return undefined;
    return { nodeId: node, token: Number(token) };
  }

  /** Idempotent: claim, move every reserved entry in batches, then drop the consumer. Returns jobs moved. */
  async recover(
    redis: Redis,
    deadNodeId: string,
    byNodeId: string,
    maxRedeliveries: number,
    force = false,
  ): Promise<number> {
    const claimed = Number(
      await callScript(
        redis,
        'claimRecovery',
        [this.keys.nodes, this.keys.recovering, this.keys.leader],
        [deadNodeId, this.leaseMs, force ? '1' : '0', this.keys.controlWake],
      ),
    );
    if (claimed !== 1) return 0;
    const queues = (await redis.smembers(this.keys.queues)).sort();
    const streams = queues.flatMap((q) => [this.keys.stream(q), this.keys.rd(q)]);
    let moved = 0;
    // The workflows of poison jobs met so far (id -> its queues): the script needs their keys.
    const flows = new Map<string, readonly string[]>();
    for (let round = 0; round < FINISH_ROUNDS; round++) {
      for (const queue of queues) {
        for (const stream of [this.keys.stream(queue), this.keys.rd(queue)]) {
          for (;;) {
            const keys = [this.keys.recovering, stream, this.keys.rd(queue), this.keys.dead(queue), this.keys.jobs];
            const args: (string | number)[] = [
              deadNodeId,
              RECOVER_BATCH,
              maxRedeliveries,
              this.deadMax,
              flows.size,
              ...this.results.scriptStore(),
            ];
            for (const [id, qs] of flows) {
              keys.push(this.keys.workflow(id), ...qs.flatMap((q) => [this.keys.stream(q), this.keys.delayed(q)]));
              args.push(id, qs.length);
            }
            const [looked, n, ...rest] = (await callScript(redis, 'recoverEntries', keys, args)) as [
              number,
              number,
              ...Buffer[],
            ];
            if (looked === -2) {
              this.addFlows(flows, rest);
              continue;
            }
            moved += n;
            if (rest.length > 0) await this.announceEnded(redis, rest);
            if (looked < 0) return moved; // another recoverer finished it
            if (looked < RECOVER_BATCH) break;
          }
        }
      }
      const done = Number(
        await callScript(
          redis,
          'finishRecovery',
          [this.keys.nodes, this.keys.recovering, this.keys.node(deadNodeId), ...streams],
          [deadNodeId],
        ),
      );
      if (done !== 0) return moved;
    }
    this.log.warn(
      { deadNode: deadNodeId, by: byNodeId },
      'node still reserves jobs after recovery (is it alive?); will retry when its claim expires',
    );
    return moved;
  }

  /** Adds the workflows named by the metas of poison jobs (recoverEntries-n.lua asked for their keys). */
  private addFlows(flows: Map<string, readonly string[]>, metas: readonly Buffer[]): void {
    for (const meta of metas) {
      const ref = workflowOfMeta(meta.toString());
      // Asked for again once given: the script and this code disagree on what a workflow's meta is.
      if (ref === undefined || flows.has(ref.id))
        throw new InvalidStateError(`recovery: cannot read the workflow of a poison job's meta ${meta.toString()}`);
      flows.set(ref.id, ref.queues);
    }
  }

  /** Tells the clients of the workflows a recovery ended (flat: id, state, client), as the fetch script's caller does. */
  private async announceEnded(redis: Redis, ended: readonly Buffer[]): Promise<void> {
    const out: { id: string; reply: string }[] = [];
    for (let i = 0; i + 2 < ended.length; i += 3) out.push({ id: String(ended[i]), reply: String(ended[i + 2]) });
    await this.workflows.announce(redis, out).catch((err: unknown) => {
      this.log.warn({ err }, 'could not announce the end of a workflow (its client re-reads it)');
    });
  }

  /** Leaves the cluster; anything still reserved goes back to the queues first. */
  async unregister(redis: Redis, nodeId: string): Promise<void> {
    await this.recover(redis, nodeId, nodeId, Number.MAX_SAFE_INTEGER, true);
  }

  /** Nodes whose lease has not expired (by the server's clock). */
  async listNodes(redis: Redis): Promise<NodeInfo[]> {
    const now = serverMs(await redis.time());
    const ids = await redis.zrangebyscore(this.keys.nodes, now, '+inf');
    if (ids.length === 0) return [];
    const pipe = redis.pipeline();
    for (const id of ids) pipe.hgetall(this.keys.node(id));
    const replies = (await pipe.exec()) ?? [];
    const nodes: NodeInfo[] = [];
    ids.forEach((id, i) => {
      const [err, raw] = replies[i] ?? [null, null];
      const h = raw as Record<string, string> | null;
      if (err || h === null || h.name === undefined) return; // info gone: the node is being recovered
      nodes.push({
        id,
        name: h.name,
        host: h.host ?? '',
        pid: Number(h.pid),
        queues: queueList(h.queues),
        concurrency: h.concurrency ?? '',
        startedAt: Number(h.startedAt),
        ...(h.schedule !== undefined ? { schedule: queueList(h.schedule) } : {}),
      });
    });
    return nodes;
  }
}

/** The queue (or schedule entry) names a node registered (a JSON array); anything unreadable reads as none. */
function queueList(raw: string | undefined): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw ?? '[]');
  } catch {
    return [];
  }
  return Array.isArray(parsed) ? parsed.filter((q): q is string => typeof q === 'string') : [];
}
