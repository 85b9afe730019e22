import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { messageOf } from '../../errors.js';
import { retryDelayMs } from '../../job-option-checks.js';
import type { Delivery, FetchReply, FetchRequest, JobRecord, Settlement, WaitReply } from '../types.js';
import type { BlockingConnection } from './blocking.js';
import {
  entryTime,
  makeCanonicalDelivery,
  makeDelivery,
  markerDue,
  receiptEntryId,
  receiptKind,
  type StreamKind,
} from './entry-codec.js';
import type { Events } from './events.js';
import { GROUP, type Keys } from './keys.js';
import type { Results } from './results.js';
import { addEndedMarks, addUniqueReleases } from './unique.js';
import { callScript, onLocalClock } from './scripts.js';
import { workflowGroups, type Workflows } from './workflows.js';
import { abortableSleep } from '../../util/sleep.js';

/** Most delayed jobs one fetch promotes per queue (the rest on the next fetch). */
const PROMOTE_MAX = 1000;
/** Most orphaned reservations taken back per stream in one fetch. */
const RECLAIM_MAX = 1000;
/** A block that ended this close to its deadline timed out (Redis's and this clock's rounding). */
const BLOCK_END_SLACK_MS = 100;
/** Queues whose keys are kept built. */
const QUEUE_KEYS_CACHED = 1000;
/** How long an unapplied set lives (fetchJobs-n.lua sets the same expiry). */
const UNAPPLIED_TTL_MS = 60_000;
/** Most unapplied sets of failed round trips carried into the next (the older ones have expired by then). */
const STALE_UNAPPLIED_MAX = 32;

type Fields = Buffer[];
/**
 * The fetch script's reply: fenced, the next due time and the server's time
 * (both on Redis's clock; `now` absent on early returns), and the flat
 * deliveries: code, entry id, then six values (code > 0) or the stored fields (code < 0).
 */
type FetchScriptReply = [number, number, (number | Buffer | Fields)[], number, (number | Buffer)[]];

/** A fetch reply, with the next due time also on the broker's clock (to tell one due time from another). */
interface RunReply extends FetchReply {
  dueOnBroker: number | undefined;
}
/** XREADGROUP's reply: per stream, its key and its entries. */
type StreamsReply = [Buffer, [Buffer, Fields | null][]][] | null;

/** An internal settlement: an entry handed back untouched (a block returned more than asked). */
interface Release {
  kind: 'release';
  delivery: Delivery;
}
type AnySettlement = Settlement | Release;

/**
 * Deliveries of jobs to this node and their settlement, the hot path: fetch (settle + lease + promote + reserve in one script,
 * results pipelined in the same round trip), settle alone, and the blocking
 * wait for work.
 */
export class Deliveries {
  /** Streams whose consumer group exists (created at 0 with MKSTREAM); cleared on NOGROUP. */
  private readonly grouped = new Set<string>();
  /** Deliveries handed out and not yet settled (queue + receipt). */
  private readonly outstanding = new Outstanding();
  /** A reply may have been lost with a connection: entries may sit in this node's pending list unseen. */
  private suspect = false;
  /** Each queue's four keys, built once (the hot path names them on every fetch). */
  private readonly queueKeys = new Map<string, readonly [string, string, string, string]>();
  /** Ends of workflows being announced: a fetch does not wait for them, the broker's close() does. */
  private readonly announcing = new Set<Promise<void>>();
  /** Names each round trip's unapplied set (keys.unapplied): this broker's own prefix, then a count. */
  private readonly callPrefix = randomBytes(8).toString('hex');
  private calls = 0;
  /**
   * Final settlements (ack, dead) a script applied in a round trip whose
   * result writes then failed (Redis at maxmemory refuses the first SET,
   * after the acks freed memory): sent again, the script would find their
   * entries no longer pending and name them unapplied, and their records
   * would then be written only where none is, so a STARTED or RETRY record
   * stored before would stay their outcome for good. They are left out of
   * the script when sent again; undefined until a round trip fails so.
   */
  private applied: WeakSet<Delivery> | undefined;
  /** The unapplied sets of such failed round trips (their late jobs' records still must not overwrite). */
  private staleUnapplied: string[] = [];

  constructor(
    private readonly keys: Keys,
    private readonly results: Results,
    private readonly deadMax: number,
    private readonly events: Events,
    private readonly workflows: Workflows,
  ) {}

  private keysOf(queue: string): readonly [string, string, string, string] {
    // Queue names come from the node's own configuration and the jobs it fetched: few; the bound only guards memory.
    if (this.queueKeys.size >= QUEUE_KEYS_CACHED) this.queueKeys.clear();
    const own = this.keys.queueKeys(queue);
    this.queueKeys.set(queue, own);
    return own;
  }

  /** Settles once every announcement of a workflow's end begun so far is sent (or failed). */
  async announced(): Promise<void> {
    await Promise.all(this.announcing);
  }

  /** Called when a connection dropped: the next fetch first looks for orphaned reservations. */
  markSuspect(): void {
    this.suspect = true;
  }

  /** A round trip's script applied `settle`, and a write after it failed: see `applied`. */
  private appliedBefore(settle: readonly AnySettlement[], unapplied: string): void {
    const applied = (this.applied ??= new WeakSet());
    for (const s of settle) if (s.kind === 'ack' || s.kind === 'dead') applied.add(s.delivery);
    // Older sets have expired (UNAPPLIED_TTL_MS): a long episode of failures names only the recent ones.
    this.staleUnapplied = [...this.staleUnapplied, unapplied].slice(-STALE_UNAPPLIED_MAX);
  }

  async fetch(redis: Redis, request: FetchRequest): Promise<FetchReply> {
    let reclaimed: Delivery[] = [];
    if (this.suspect && request.count > 0) {
      this.suspect = false;
      reclaimed = await this.reclaim(
        redis,
        request.nodeId,
        request.plan.map((p) => p.queue),
      ).catch((err: unknown) => {
        this.suspect = true;
        throw err;
      });
    }
    let reply: RunReply;
    try {
      reply = await this.run(
        redis,
        request.nodeId,
        request.plan,
        Math.max(0, request.count - reclaimed.length),
        request.settle,
      );
    } catch (err) {
      // The reclaimed entries were never handed out: the next fetch must find them again, not skip them as outstanding.
      if (reclaimed.length > 0) {
        for (const d of reclaimed) this.outstanding.delete(d);
        this.suspect = true;
      }
      throw err;
    }
    if (reply.fenced) {
      for (const d of reclaimed) this.outstanding.delete(d);
      return reply;
    }
    return { deliveries: [...reclaimed, ...reply.deliveries], nextDueAt: reply.nextDueAt, fenced: false };
  }

  /**
   * Entries in this node's pending list that it never handed out: a fetch or
   * block whose reply was lost with the connection. Without this they would
   * stay reserved until the node dies. Reads the group's history for this
   * consumer (XREADGROUP ... 0), which reserves nothing new.
   */
  private async reclaim(redis: Redis, nodeId: string, queues: readonly string[]): Promise<Delivery[]> {
    const streams = queues.flatMap((queue) => [
      { key: this.keys.rd(queue), queue, kind: 'r' as const },
      { key: this.keys.stream(queue), queue, kind: 'q' as const },
    ]);
    const byKey = new Map(streams.map((s) => [s.key, s]));
    let reply: StreamsReply;
    try {
      reply = (await redis.callBuffer(
        'XREADGROUP',
        'GROUP',
        GROUP,
        nodeId,
        'COUNT',
        RECLAIM_MAX,
        'STREAMS',
        ...streams.map((s) => s.key),
        ...streams.map(() => '0'),
      )) as StreamsReply;
    } catch (err) {
      if (/NOGROUP/.test(messageOf(err))) return [];
      throw err;
    }
    const found: Delivery[] = [];
    const drop: AnySettlement[] = [];
    for (const [key, entries] of reply ?? []) {
      const stream = byKey.get(key.toString());
      if (stream === undefined) continue;
      for (const [rawId, fields] of entries) {
        const delivery = makeDelivery(stream.queue, stream.kind, rawId.toString(), fields ?? []);
        if (this.outstanding.has(delivery)) continue;
        if (delivery.job.rateSlot !== undefined) turnOnLocalClock(delivery.job, rawId.toString(), undefined);
        // A deleted entry or a marker left pending: just ack it.
        if (fields === null || markerDue(fields) !== undefined) drop.push({ kind: 'ack', delivery });
        else found.push(delivery);
      }
    }
    await this.settle(redis, drop);
    for (const d of found) this.outstanding.add(d);
    return found;
  }

  /** Handed out and never to be settled here (a fenced node dropped them): their receipts would stay for good. */
  forget(deliveries: readonly Delivery[]): void {
    for (const d of deliveries) this.outstanding.delete(d);
  }

  async settle(redis: Redis, settlements: readonly AnySettlement[]): Promise<void> {
    if (settlements.length > 0) await this.run(redis, '', [], 0, settlements);
  }

  /**
   * One round trip: the fetch script, then the result writes in the same
   * pipeline (so a client woken by its reply list finds the result set).
   */
  private async run(
    redis: Redis,
    nodeId: string,
    plan: FetchRequest['plan'],
    count: number,
    settle: readonly AnySettlement[],
  ): Promise<RunReply> {
    const queues: string[] = [];
    const index = new Map<string, number>();
    // Per planned queue, in the order of `queues` (the plan's queues come first).
    const quotas = new Map<string, number>();
    const indexOf = (queue: string): number => {
      let i = index.get(queue);
      if (i === undefined) {
        queues.push(queue);
        i = queues.length;
        index.set(queue, i);
      }
      return i;
    };
    for (const { queue, quota } of plan) {
      indexOf(queue);
      quotas.set(queue, (quotas.get(queue) ?? 0) + wholeCount(quota));
    }
    const planned = queues.length;
    const ops: (string | number)[] = [];
    // Plain acks grouped per stream (2 × queue index + 1 for :rd -> entry ids, job ids): the script acks each group in bulk.
    const acks = new Map<number, [string[], string[]]>();
    for (const s of settle) {
      if (s.kind === 'progress') continue;
      if (this.applied?.has(s.delivery) === true) continue;
      const { receipt } = s.delivery;
      const kind = receiptKind(receipt);
      const entryId = receiptEntryId(receipt);
      const q = indexOf(s.delivery.queue);
      const jobId = s.delivery.job.id;
      if (s.kind === 'ack') {
        const group = 2 * q + (kind === 'r' ? 1 : 0);
        const held = acks.get(group);
        if (held === undefined) acks.set(group, [[entryId], [jobId]]);
        else {
          held[0].push(entryId);
          held[1].push(jobId);
        }
        continue;
      }
      if (s.kind === 'retry') ops.push('r', q, kind, entryId, retryDelayMs(s.delay), jobId);
      else if (s.kind === 'dead') ops.push('d', q, kind, entryId, s.reason, jobId);
      else if (s.kind === 'giveBack') ops.push('g', q, kind, entryId, s.spread === true ? '0' : '1', jobId);
      else if (s.kind === 'defer')
        ops.push(s.slot ? 's' : 'l', q, kind, entryId, retryDelayMs(Math.ceil(s.delay)), jobId);
      else ops.push('g', q, kind, entryId, '0', jobId);
    }
    // Workflow jobs that ended: their workflows carry on in the same script (none: nothing added).
    const flows = workflowGroups(settle, this.results.limit);
    const flowArgs: (string | number | Buffer)[] = [];
    const flowIds: string[] = [];
    if (flows !== undefined)
      for (const flow of flows.values()) {
        flowIds.push(flow.id);
        flowArgs.push(flow.queues.length);
        for (const q of flow.queues) flowArgs.push(indexOf(q));
        flowArgs.push(flow.members.length / 3, ...flow.members);
      }
    const keys = [this.keys.nodes];
    for (const q of queues) {
      const own = this.queueKeys.get(q) ?? this.keysOf(q);
      keys.push(own[0], own[1], own[2], own[3]);
    }
    for (const id of flowIds) keys.push(this.keys.workflow(id));
    keys.push(this.keys.jobs);
    // A late settlement the script does not apply (its entry recovered) must not overwrite a result: the script
    // names its job here, and storeResults, next in the pipeline, writes its records only where none is
    // (docs/architecture.md, "The Redis broker").
    const unapplied = this.keys.unapplied(`${this.callPrefix}:${++this.calls}`);
    keys.push(unapplied);
    const args: (string | number | Buffer)[] = [
      nodeId,
      wholeCount(count),
      queues.length,
      planned,
      this.deadMax,
      PROMOTE_MAX,
      ops.length / 6,
      acks.size,
    ];
    for (const quota of quotas.values()) args.push(quota);
    for (const op of ops) args.push(op);
    for (const [group, [entryIds, jobIds]] of acks) {
      args.push(group >> 1, (group & 1) === 1 ? 'r' : 'q', entryIds.length);
      for (const id of entryIds) args.push(id);
      for (const id of jobIds) args.push(id);
    }
    for (const arg of flowArgs) args.push(arg);

    const pipe = redis.pipeline();
    addEndedMarks(pipe, this.keys, settle, this.results.ttlMs);
    const scriptAt = pipe.length;
    callScript(pipe, 'fetchJobs', keys, args);
    // Rare: the late jobs of a failed round trip keep their place in this one's set (the Acker sends a failed
    // batch again first, so the next call with settlements carries them).
    const stale = settle.length > 0 ? this.staleUnapplied : [];
    if (stale.length > 0) pipe.sunionstore(unapplied, unapplied, ...stale).pexpire(unapplied, UNAPPLIED_TTL_MS);
    this.results.addWrites(pipe, settle, unapplied);
    addUniqueReleases(pipe, this.keys, settle);
    // Last: a failed event write leaves the script's and the results' replies as they are.
    const events = this.events.addWrite(pipe);
    let replies: [Error | null, unknown][];
    try {
      replies = (await pipe.exec()) ?? [];
    } catch (err) {
      this.events.written(events, undefined, err);
      // The script may have run and its reply been lost.
      if (count > 0) this.suspect = true;
      throw err;
    }
    this.events.written(events, replies);
    const scriptReply = replies[scriptAt];
    const scriptRan = scriptReply?.[0] === null;
    // The script settled what it was given: those receipts are done even if a result write after it fails.
    if (scriptRan) for (const s of settle) if (s.kind !== 'progress') this.outstanding.delete(s.delivery);
    for (const [i, [err]] of replies.entries()) {
      // An event write that failed fails no fetch: its events went back to be carried again.
      if (err === null || (events !== undefined && i >= events.from)) continue;
      if (scriptRan) {
        // The script ran (it reserved jobs) but a result write after it failed:
        // the next fetch must find those reservations, or they would sit
        // reserved until this node dies.
        if (count > 0) this.suspect = true;
        this.appliedBefore(settle, unapplied);
      }
      throw err;
    }
    if (stale.length > 0) this.staleUnapplied = [];
    // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- exec() answers every queued command, the script among them
    const [fenced, nextDue, raw, brokerNow, ended] = scriptReply![1] as FetchScriptReply;
    if (ended.length > 0) this.announceEnded(redis, flowIds, ended);
    const deliveries: Delivery[] = [];
    for (let i = 0; i < raw.length;) {
      const code = raw[i] as number;
      const abs = Math.abs(code);
      // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- the script names only queues it was given
      const queue = queues[(abs >> 1) - 1]!;
      const kind: StreamKind = (abs & 1) === 1 ? 'r' : 'q';
      const entryId = (raw[i + 1] as Buffer).toString();
      let d: Delivery;
      if (code > 0) {
        d = makeCanonicalDelivery(queue, kind, entryId, raw as Buffer[], i + 2);
        i += 8;
      } else {
        d = makeDelivery(queue, kind, entryId, raw[i + 2] as Fields);
        if (d.job.rateSlot !== undefined) turnOnLocalClock(d.job, entryId, brokerNow);
        i += 3;
      }
      deliveries.push(d);
      this.outstanding.add(d);
    }
    const nextDueAt = brokerNow < 0 ? undefined : onLocalClock(nextDue, brokerNow);
    return { deliveries, nextDueAt, fenced: fenced === 1, dueOnBroker: nextDue < 0 ? undefined : nextDue };
  }

  /**
   * Tells the clients of the workflows the script ended. After the script,
   * not with it (what ends is known only then), and not awaited by the fetch
   * (a round trip per workflow's end): a workflow record keeps its outcome,
   * so a client that missed this reads it (docs/architecture.md, "Workflows").
   */
  private announceEnded(redis: Redis, flowIds: readonly string[], ended: (number | Buffer)[]): void {
    const out: { id: string; reply: string }[] = [];
    for (let i = 0; i + 2 < ended.length; i += 3) {
      const id = flowIds[Number(ended[i]) - 1];
      if (id !== undefined) out.push({ id, reply: String(ended[i + 2]) });
    }
    const sent = this.workflows
      .announce(redis, out)
      .catch(() => undefined)
      .finally(() => this.announcing.delete(sent));
    this.announcing.add(sent);
  }

  /**
   * Blocks until work arrives, `timeoutMs` passes or `signal` aborts. When a
   * timer marker wakes the block (a delayed job became the earliest of a
   * queue), a fetch asks the broker what is due and when the next job is
   * (its clock decides, whatever this machine's says); when that is before
   * the timeout, waits for it here and fetches it, so the job is delivered
   * by this very call. A long wait is blocks of MAX_BLOCK_MS, each re-armed
   * with no fetch between them (what an idle node costs), ending early once
   * a lost reply may have left entries reserved unseen (markSuspect): the
   * caller's next fetch takes them back.
   */
  async waitForWork(
    redis: Redis,
    blocking: BlockingConnection,
    nodeId: string,
    queues: readonly string[],
    timeoutMs: number,
    signal: AbortSignal,
    count: number,
    leaseHeld?: () => boolean,
  ): Promise<WaitReply> {
    // A lost reply may have left entries reserved unseen: back to the caller, whose fetch takes them back first.
    if (this.suspect) return { deliveries: [], nextDueAt: undefined };
    const want = Math.max(1, count);
    const deadline = Date.now() + timeoutMs;
    const plan = queues.map((queue) => ({ queue, quota: want }));
    const answer = (r: RunReply): WaitReply => ({ deliveries: r.deliveries, nextDueAt: r.nextDueAt });
    // Blocks end here: the caller's deadline, or the next due time once the job waited for went elsewhere.
    let blockUntil = deadline;
    for (;;) {
      const until = Math.min(blockUntil, Date.now() + blocking.maxBlockMs);
      const got = await this.blockOnce(redis, blocking, nodeId, queues, until, signal, want, leaseHeld);
      // A timer marker read with jobs was acked with them: no other node will see it. Its due time is on
      // the broker's clock, so the loop's next fetch asks the broker at once (it promotes what is due and
      // learns the next due time); else the delayed job would wait for a heartbeat, half a lease.
      if (got.deliveries.length > 0)
        return { deliveries: got.deliveries, nextDueAt: got.marker ? Date.now() : undefined };
      if (!got.marker) {
        // A block that ran its whole course blocks again (an idle node pays no fetch per block), unless
        // the wait is over or a reply may have been lost (the caller's fetch first takes back orphans).
        const ranItsCourse = Date.now() >= until - BLOCK_END_SLACK_MS;
        if (!ranItsCourse || signal.aborted || this.suspect || Date.now() >= blockUntil)
          return { deliveries: [], nextDueAt: undefined };
        continue;
      }
      let reply = await this.run(redis, nodeId, plan, want, []);
      for (;;) {
        if (reply.fenced || reply.deliveries.length > 0 || Date.now() >= deadline) return answer(reply);
        // The delayed job went to another node: block again, so new work wakes us.
        if (reply.nextDueAt === undefined) break;
        if (reply.nextDueAt > deadline) return answer(reply);
        const due = reply.dueOnBroker;
        if (!(await abortableSleep(reply.nextDueAt - Date.now(), signal))) return answer(reply);
        const next = await this.run(redis, nodeId, plan, want, []);
        // Another node took the job waited for (the next due is a later one): block again, so new
        // work wakes us, but only until that later job is due (no marker will announce it).
        if (
          !next.fenced &&
          next.deliveries.length === 0 &&
          next.dueOnBroker !== undefined &&
          due !== undefined &&
          next.dueOnBroker > due
        ) {
          blockUntil = Math.min(deadline, next.nextDueAt ?? deadline);
          break;
        }
        // Otherwise: delivered, fenced, or the same job not due yet by the broker's clock (pause again rather than block past it).
        reply = next;
      }
    }
  }

  /**
   * One XREADGROUP BLOCK over every stream of the node's queues (:rd first)
   * on the blocking connection. Entries come back already reserved by the
   * node. Timer markers are acked and reported as `marker` (the due time they
   * carry is on the broker's clock: the caller asks the broker instead);
   * entries beyond `want` (Redis applies COUNT per stream) are handed back untouched.
   * The lease is confirmed before jobs are handed over, unless `leaseHeld`
   * says the node surely holds it and there is nothing to settle.
   */
  private async blockOnce(
    redis: Redis,
    blocking: BlockingConnection,
    nodeId: string,
    queues: readonly string[],
    deadline: number,
    signal: AbortSignal,
    want: number,
    leaseHeld: (() => boolean) | undefined,
  ): Promise<{ deliveries: Delivery[]; marker: boolean }> {
    const streams: { key: string; queue: string; kind: StreamKind }[] = [];
    for (const queue of queues) {
      streams.push({ key: this.keys.rd(queue), queue, kind: 'r' }, { key: this.keys.stream(queue), queue, kind: 'q' });
    }
    const byKey = new Map(streams.map((s) => [s.key, s]));
    let reply: StreamsReply;
    for (let attempt = 0; ; attempt++) {
      await this.ensureGroups(
        redis,
        streams.map((s) => s.key),
      );
      try {
        reply = await blocking.block(
          (conn, ms) =>
            conn.callBuffer(
              'XREADGROUP',
              'GROUP',
              GROUP,
              nodeId,
              'COUNT',
              want,
              'BLOCK',
              ms,
              'STREAMS',
              ...streams.map((s) => s.key),
              ...streams.map(() => '>'),
            ) as Promise<StreamsReply>,
          Math.max(0, deadline - Date.now()),
          signal,
        );
        break;
      } catch (err) {
        // The groups vanished (Redis restarted empty, or a key was deleted): create them and block again.
        if (attempt < 3 && /NOGROUP/.test(messageOf(err))) {
          this.grouped.clear();
          continue;
        }
        throw err;
      }
    }
    const deliveries: Delivery[] = [];
    const internal: AnySettlement[] = [];
    let marker = false;
    for (const [key, entries] of reply ?? []) {
      const stream = byKey.get(key.toString());
      if (stream === undefined) continue;
      for (const [rawId, fields] of entries) {
        if (fields === null) continue;
        const delivery = makeDelivery(stream.queue, stream.kind, rawId.toString(), fields);
        if (delivery.job.rateSlot !== undefined) turnOnLocalClock(delivery.job, rawId.toString(), undefined);
        if (markerDue(fields) !== undefined) {
          marker = true;
          internal.push({ kind: 'ack', delivery });
        } else if (deliveries.length < want) {
          deliveries.push(delivery);
          this.outstanding.add(delivery);
        } else {
          internal.push({ kind: 'release', delivery });
        }
      }
    }
    if (deliveries.length === 0) {
      await this.settle(redis, internal);
      return { deliveries, marker };
    }
    // The read reserved under our id whatever our lease says: a node fenced
    // (and recovered) while it blocked would hold jobs no one recovers. The
    // lease decides, in the call that acks the markers anyway. A lease this
    // node's own clock says it still holds was not taken (only an expired
    // one is recovered): a round trip less on the idle node's latency.
    if (internal.length === 0 && leaseHeld?.() === true) return { deliveries, marker };
    try {
      const check = await this.run(redis, nodeId, [], 0, internal);
      if (!check.fenced) return { deliveries, marker };
      await this.settle(
        redis,
        deliveries.map((delivery) => ({ kind: 'release', delivery })),
      );
    } catch (err) {
      // Never handed over, yet reserved under this node by the read: the next fetch takes them back
      // (reclaim passes over the entries it thinks handed out).
      this.forget(deliveries);
      this.suspect = true;
      throw err;
    }
    return { deliveries: [], marker };
  }

  /** Creates the groups not known to exist, in one script Redis runs even at maxmemory (createGroups-n.lua). */
  private async ensureGroups(redis: Redis, streams: readonly string[]): Promise<void> {
    const missing = streams.filter((s) => !this.grouped.has(s));
    if (missing.length === 0) return;
    await callScript(redis, 'createGroups', missing, []);
    for (const key of missing) this.grouped.add(key);
  }
}

/** A count the fetch script accepts: a whole number >= 0 (the script rejects anything else, changing nothing). */
function wholeCount(n: number): number {
  return Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0;
}

/** Deliveries handed out and not yet settled, per queue by receipt (no key built per job). */
class Outstanding {
  private readonly byQueue = new Map<string, Set<string>>();

  add(d: Delivery): void {
    const receipts = this.byQueue.get(d.queue);
    if (receipts === undefined) this.byQueue.set(d.queue, new Set([d.receipt]));
    else receipts.add(d.receipt);
  }

  delete(d: Delivery): void {
    this.byQueue.get(d.queue)?.delete(d.receipt);
  }

  has(d: Delivery): boolean {
    return this.byQueue.get(d.queue)?.has(d.receipt) ?? false;
  }
}

/**
 * A rate-limit turn as Redis wrote it (its clock) moved to this process's
 * clock, keeping how late the job is: by Redis's now when the fetch script
 * read it, else by the time the entry was promoted to its stream (a blocking
 * read returns entries as they arrive).
 */
function turnOnLocalClock(job: JobRecord, entryId: string, brokerNow: number | undefined): void {
  const turn = job.rateSlot ?? 0;
  job.rateSlot =
    brokerNow !== undefined
      ? (onLocalClock(turn, brokerNow) ?? Date.now())
      : Date.now() - Math.max(0, entryTime(entryId) - turn);
}
