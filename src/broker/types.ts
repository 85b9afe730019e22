import type { EventBatch } from '../events/event-batch.js';
import type { NodeEvent } from '../events/node-event.js';
import type { JobOptions, SerializedError } from '../job-types.js';

/**
 * The broker SPI: where jobs wait (queues, delayed set, dead set), where
 * results live, and how nodes find each other, as one interface per role
 * (producer, results, consumer, membership, control, admin) that Broker
 * composes. Two implementations: `redis://` (distributed) and `memory://`
 * (one process). The Pool never sees this; the Consumer never names a Redis
 * command.
 */

/** One job as the broker stores it. The arguments stay msgpack-encoded: only the child decodes them. */
export interface JobRecord {
  /** The job's id (a UUID unless the producer chose one). */
  id: string;
  /** The task's name. */
  task: string;
  /** The queue it was enqueued to. */
  queue: string;
  /** msgpack of the argument array. */
  payload: Uint8Array;
  /** Retries spent so far (0 on the first attempt). */
  attempt: number;
  /** Times the job went back to its queue without an outcome (dead node recovered, shutdown). */
  redeliveries: number;
  /** What the producer attached: retries, backoff, time limits, ignoreResult, resultTtl. */
  options: JobOptions;
  /** Epoch ms at enqueue. */
  enqueuedAt: number;
  /** Client id waiting for this job's result, if any. */
  replyTo?: string;
  /**
   * Its client takes a small final result from the announcement itself
   * (the Redis broker that enqueued it reads such announcements); without
   * it only the id is announced, as older clients expect.
   */
  replyInline?: boolean;
  /**
   * The unique key the job holds (the `unique` enqueue option, made by the
   * Client: `k:<your key>` or `a:<task>:<hash of the arguments>`): while the
   * job waits, is delayed or runs, a job enqueued with the same key is not
   * added. Released when the job ends.
   */
  uniqueKey?: string;
  /**
   * With `uniqueKey`: ms after which the key is released even if the job has
   * not ended (the `unique` option's `ttl`), counted from its enqueue, and
   * again from a dead-set retry, which gives the job its key back.
   */
  uniqueTtl?: number;
  /**
   * The producer chose the id: a job enqueued again with it is not added
   * while this one waits, is delayed or runs, nor after it ended while its
   * result is kept.
   */
  ownId?: boolean;
  /**
   * Set when its rate limit deferred the job to its turn (a `defer` with
   * `slot`): that turn, epoch ms on this process's clock (the Redis broker
   * converts, keeping how late the job is). Such a job starts without asking
   * the bucket again unless it comes late; a retry or a give-back clears it.
   */
  rateSlot?: number;
  /** The tick a periodic task's job stands for (epoch ms on the broker's clock): `currentTask().scheduledFor`. */
  scheduledFor?: number;
  /** The job is a step of a workflow (or has onSuccess/onError callbacks): what follows it is found there. */
  workflow?: WorkflowRef;
}

/**
 * A job to add: run now, after `delay` ms (counted on the broker's clock), or
 * at `eta` (epoch ms, compared with the broker's clock as is: absolute, so off
 * by the producer's clock skew). Delayed jobs wait in the broker, never in a worker.
 */
export interface NewJob extends JobRecord {
  /** Ms from now (on the broker's clock) before the job is ready. */
  delay?: number;
  /** Epoch ms when the job is ready (compared with the broker's clock). */
  eta?: number;
}

/**
 * A fetched job, reserved by this node until it is settled. `receipt` is the
 * broker's own handle (opaque to the Consumer). `malformed` says why an entry
 * could not be read; such a delivery goes straight to the dead set.
 */
export interface Delivery {
  /** The broker's handle on this reservation: settlements name it. */
  readonly receipt: string;
  /** The queue it was fetched from. */
  readonly queue: string;
  /** The job (a placeholder with what could be read, when `malformed`). */
  readonly job: JobRecord;
  /** Why the entry could not be read, if it could not. */
  readonly malformed?: string;
}

/**
 * A job's state, as Celery names them: PENDING (waiting in its queue, or
 * delayed), RECEIVED (held by a node), STARTED (running in a child: known
 * with `trackStarted`), RETRY (failed, a retry is scheduled), then SUCCESS,
 * FAILURE or REVOKED (revoked before it ran, or terminated while running).
 * `handle.state()` finds the first four from where the job is.
 */
export type JobState = 'PENDING' | 'RECEIVED' | 'STARTED' | 'RETRY' | 'SUCCESS' | 'FAILURE' | 'REVOKED';

/** A job's state and outcome, as `Client.result()` and `prefork result` show it. */
export interface ResultRecord {
  /** The job's id. */
  id: string;
  /** The task's name. */
  task: string;
  /** The queue the job was fetched from. */
  queue: string;
  /** Where the job is now. */
  state: JobState;
  /** What the task returned (SUCCESS). */
  value?: unknown;
  /** What the task threw (FAILURE, and RETRY: the attempt's error). */
  error?: SerializedError;
  /**
   * The task is defined with `ignoreResult`: neither value nor error was
   * kept, only the final state (so a waiter learns at once there is no result).
   */
  ignoreResult?: boolean;
  /** The name of the node that ran the attempt. */
  node?: string;
  /** The process id of the child that ran it. */
  pid?: number;
  /** Milliseconds the last attempt ran. */
  runtime?: number;
  /** Retries spent before this attempt (0 on the first). */
  retries: number;
  /** Epoch ms when the job was enqueued. */
  enqueuedAt?: number;
  /**
   * Epoch ms when a node fetched the job: set when `handle.state()` finds it
   * held by a node that does not track starts (RECEIVED: it may be running).
   */
  receivedAt?: number;
  /** Epoch ms when the attempt started in a child. */
  startedAt?: number;
  /** Epoch ms when the attempt ended. */
  finishedAt?: number;
  /**
   * msgpack of the job's argument array, as enqueued, when it is at most
   * ARGS_KEPT_MAX (64 KiB); decode it with `decodeJobArgs` (only to show
   * it: nothing on the job's path decodes it).
   */
  payload?: Uint8Array;
  /** The payload's size in bytes, given instead of `payload` when it was too large to keep here. */
  payloadBytes?: number;
  /** The last progress the task reported (`currentTask().progress(value)`), kept with every later record of the job. */
  progress?: unknown;
  /** Epoch ms when the node received that progress. */
  progressAt?: number;
  /**
   * When the job is due, as `handle.state()` finds it: a delayed job
   * (PENDING) or the next attempt of a retry (RETRY). Epoch ms on the
   * broker's clock.
   */
  dueAt?: number;
  /**
   * PENDING with `dueAt`: the job waits in the broker for its turn under a
   * rate limit (as `handle.state()` finds it); no retry is spent on it.
   */
  rateLimited?: boolean;
}

/**
 * What becomes of a delivery. Every settlement removes the delivery from this
 * node's reserved set; `result`, when present, is stored with the job's
 * `resultTtl`, else the broker's, and a final one announced to `job.replyTo`.
 * - ack: done (SUCCESS, a FAILURE with no retries left that is not dead-lettered, or
 *   REVOKED: a revoked job skipped when fetched, or stopped while it ran; never retried).
 * - retry: back to the delayed set, due after `delay` ms, with attempt + 1.
 * - dead: to the dead set with `reason` (retries spent, unknown task, bad payload, poison).
 * - giveBack: back to the front of its queue unstarted, redeliveries + 1 (warm shutdown, cold shutdown);
 *   with `spread`, as it was fetched (a healthy node hands on quick jobs that turned slow: HoardGuard).
 * - defer: back to the delayed set unstarted, due after `delay` ms, spending
 *   no retry and no redelivery (a rate limit: the job waits for its turn in the
 *   broker). With `slot`, the job is marked as holding that turn (`rateSlot`)
 *   and starts when due without asking again; without, it asks again then.
 * - progress: not settled: only the result (RECEIVED / STARTED, or STARTED with
 *   the task's latest `progress`, throttled in the child) is written.
 */
export type Settlement =
  | {
      /** Done. */
      kind: 'ack';
      /** The delivery it settles. */
      delivery: Delivery;
      /** The result to store and announce (none with ignoreResult). */
      result?: ResultRecord;
      /** A workflow's job: how it ended, recorded in the workflow with the ack (whatever ignoreResult says). */
      outcome?: StepOutcome;
    }
  | {
      /** Back to the delayed set. */
      kind: 'retry';
      /** The delivery it settles. */
      delivery: Delivery;
      /** Ms from now (on the broker's clock) before the retry is due. */
      delay: number;
      /** The RETRY result to store (none with ignoreResult). */
      result?: ResultRecord;
    }
  | {
      /** To the dead set. */
      kind: 'dead';
      /** The delivery it settles. */
      delivery: Delivery;
      /** Why, as `prefork dead list` shows it. */
      reason: string;
      /** The FAILURE result to store and announce (none with ignoreResult). */
      result?: ResultRecord;
      /** A workflow's job: its failure, recorded in the workflow with the dead letter. */
      outcome?: StepOutcome;
    }
  | {
      /** Back to the front of its queue. */
      kind: 'giveBack';
      /** The delivery it settles. */
      delivery: Delivery;
      /**
       * Given back by a node that holds more jobs than it will start soon,
       * for other nodes: no redelivery is counted (maxRedeliveries is about
       * nodes that died holding the job) and the entry is left as fetched.
       */
      spread?: boolean;
    }
  | {
      /** Back to the delayed set unstarted (a rate limit's turn). */
      kind: 'defer';
      /** The delivery it settles. */
      delivery: Delivery;
      /** Ms from now (on the broker's clock) before the job is due again. */
      delay: number;
      /** The due time is the job's rate-limit slot: mark it so it does not ask again. */
      slot: boolean;
    }
  | {
      /** Not settled: a state to record. */
      kind: 'progress';
      /** The delivery, still reserved. */
      delivery: Delivery;
      /** The RECEIVED or STARTED result to store. */
      result: ResultRecord;
    };

/** One queue's share of a fetch: take up to `quota` from it in the first pass. */
export interface QueueQuota {
  /** The queue's name. */
  queue: string;
  /** Most jobs to take from it in the first pass. */
  quota: number;
}

/** One fetch round trip: settle, renew the lease, promote due delayed jobs, reserve. */
export interface FetchRequest {
  /** The fetching node: its lease is renewed, the jobs are reserved by it. */
  nodeId: string;
  /** Queues in the order to try; after the quotas, leftovers are taken in this order. */
  plan: QueueQuota[];
  /** Most jobs to reserve now (0: only settle and promote). */
  count: number;
  /** Settlements to apply in the same round trip, before fetching. */
  settle: Settlement[];
}

/** What a fetch brought. */
export interface FetchReply {
  /** The jobs reserved for the node (up to the request's `count`). */
  deliveries: Delivery[];
  /**
   * When the next delayed job of these queues is due, if any: epoch ms on
   * this process's clock (the Redis broker converts from Redis's clock by the
   * difference, so a skewed local clock neither spins nor delays).
   */
  nextDueAt: number | undefined;
  /** This node's lease is gone: another node has taken its jobs (a lease that ran out and that none took yet is not gone). */
  fenced: boolean;
}

/**
 * What ended a wait. `nextDueAt` tells the Consumer when to fetch again for
 * delayed jobs: a delayed job enqueued while this node was blocked must still
 * run on time, so the broker wakes blocked nodes when the earliest due time of
 * a queue moves earlier. On this process's clock, as FetchReply's.
 */
export interface WaitReply {
  /** The jobs that arrived, already reserved by the waiting node (maybe none). */
  deliveries: Delivery[];
  /** When the next delayed job of these queues is due (epoch ms), if any. */
  nextDueAt: number | undefined;
}

/** A node as it registers with the broker, and as `prefork inspect` lists it. */
export interface NodeInfo {
  /** The id it is registered under: its name and a random suffix (a new one after fencing). */
  id: string;
  /** Hostname-like name (`-n`), e.g. worker1@host. */
  name: string;
  /** The machine's hostname. */
  host: string;
  /** The node's process id. */
  pid: number;
  /** The queues it consumes. */
  queues: string[];
  /** Its number of children, or "max,min" with autoscale. */
  concurrency: string;
  /** Epoch ms when it registered. */
  startedAt: number;
  /** The names of the schedule entries it runs, if it has a schedule. */
  schedule?: string[];
}

/** Fields of a node's description that change while it runs (`BrokerMembership.updateNode`). */
export type NodeUpdate = Partial<Pick<NodeInfo, 'concurrency'>>;

/** What a heartbeat learned. */
export interface HeartbeatReply {
  /**
   * This node's lease was gone: another node has taken (or will take) its
   * jobs. A lease that ran out but that no recovery claimed yet is renewed
   * instead (see `lapsedMs`): nobody took those jobs.
   */
  fenced: boolean;
  /** Set when this beat renewed a lease that had run out (ms past its deadline, by the broker's clock) that no node had taken yet. */
  lapsedMs?: number;
  /** Nodes whose lease expired (or whose recoverer died): recover their jobs. */
  expired: string[];
  /** On this process's clock, as FetchReply's; a broker may leave it undefined on some beats (it is a fallback to the wake-ups). */
  nextDueAt: number | undefined;
  /** The earliest lease deadline of another live node, on this process's clock: beat then to recover it on time. */
  nextExpiryAt?: number;
  /** Control requests that were waiting for this node (taken: no other beat sees them). */
  control?: ControlRequest[];
  /**
   * Requests were posted to this node since its last beat, taken or not,
   * or a pause, a resume or a rate was stored: one that lapsed before the
   * node took it (the node stalled, or was cut off), or that was never
   * sent, may have paused a queue or set a rate the node does not follow yet.
   */
  controlPosted?: boolean;
  /** Who holds the leader lease now (only when the beat stood for leader): maybe this node. */
  leader?: LeaderLease;
}

/**
 * The leader lease: the node that does the cluster's singleton housekeeping,
 * and its fencing token, which grows by one at each change of holder.
 * Nothing depends on it for correctness.
 */
export interface LeaderLease {
  /** The id of the node that holds it. */
  nodeId: string;
  /** Grows at each change of holder. */
  token: number;
}

/** What `prefork control` and `prefork inspect stats` ask of a node. */
export type ControlCommand =
  | 'ping'
  | 'stats'
  | 'grow'
  | 'shrink'
  | 'autoscale'
  | 'shutdown'
  | 'revoke'
  | 'active'
  | 'reserved'
  | 'registered'
  | 'pause'
  | 'resume'
  | 'rate-limit';

/** One control command to one or more nodes. */
export interface ControlRequest {
  /** Unique per request: the replies are collected under it. */
  id: string;
  /** What to do. */
  command: ControlCommand;
  /**
   * grow / shrink: [n]; autoscale: [max, min]; revoke: [terminate (0|1),
   * grace ms, expiresAt epoch ms, job id, ...]; pause / resume: [queue,
   * 'all' | 'node'] (on every node, or on the nodes addressed alone);
   * rate-limit: [task, rate or "off"]; otherwise []. Each command checks
   * its own.
   */
  args: (string | number)[];
}

/** A revoked job id the cluster remembers (`prefork inspect revoked`). */
export interface RevokedJob {
  /** The job's id. */
  id: string;
  /** Epoch ms (the broker's clock) when it was revoked. */
  revokedAt: number;
  /** Epoch ms until when it is remembered (the broker's `revokeTtl` after `revokedAt`). */
  expiresAt: number;
}

/** What `revoke` did to one job. */
export interface RevokeOutcome {
  /** The job's id. */
  id: string;
  /**
   * revoked: it had not finished; REVOKED is stored and every node skips
   * it (or, with terminate, stops it while it runs). finished: it had
   * already ended (`state` says how; a workflow, with no callback of it
   * left to run; a workflow step without `state`: its workflow skipped it,
   * it never runs); nothing changed. unknown: no job or
   * workflow with this id waits, runs or has a stored result.
   */
  outcome: 'revoked' | 'finished' | 'unknown';
  /** The state it had before (undefined when none was stored, e.g. a waiting job without trackStarted). */
  state?: JobState;
  /** It was taken out of its queue or delayed set (it had not been fetched). */
  removed?: boolean;
  /**
   * The workflow the job is a step of (or whose callbacks it carries): taken
   * out of its queue, it failed there at once (what follows never runs, a
   * chord's callback included, and its onError runs); held by a node, the
   * workflow hears of it when that node settles it.
   */
  workflow?: string;
  /**
   * The job is a workflow step its workflow has not enqueued yet (a chain's
   * later step, a chord's callback): it never runs, and its workflow records
   * it as revoked when its turn comes.
   */
  unstarted?: boolean;
  /**
   * The id was a workflow's: how many of its members that had not ended
   * this call revoked (callbacks included; not those revoked before, nor a
   * running one, known by its STARTED state, revoked without terminate:
   * it runs on). Waiting ones were taken out and
   * failed in it at once, held ones as any held job, and those not started
   * yet never run: the node that fetches one when its turn comes skips it.
   * A workflow that had ended is revoked so while callbacks of it still
   * wait or run (a failed step's onError, and the callbacks after it).
   */
  members?: number;
}

/** Options of one revoke. */
export interface RevokeOptions {
  /** Stop the job if it is running: its signal aborts, and its child is killed after `grace` ms. */
  terminate: boolean;
  /** Ms between the abort and the kill (terminate). */
  grace: number;
}

/**
 * A paused queue (`prefork control pause`): no node fetches from it, or
 * with `node` only the node of that name; remembered across restarts.
 */
export interface PausedQueue {
  /** The queue's name. */
  queue: string;
  /** The name of the one node it is paused on; undefined: on every node. */
  node?: string;
}

/** A node's answer to a control request. */
export interface ControlReply {
  /** The node's name. */
  node: string;
  /** The id the node is registered under. */
  nodeId: string;
  /** Whether the command succeeded (else see `error`). */
  ok: boolean;
  /** What the command reports (ping: pid and uptime; stats: the node's stats; sizing: the pool's size). */
  value?: unknown;
  /** Why the command failed (ok false). */
  error?: string;
}

/** One queue's jobs by where they are (`prefork inspect queues`). */
export interface QueueCounts {
  /** The queue's name. */
  queue: string;
  /** Waiting to be fetched (including given-back jobs). */
  waiting: number;
  /** Fetched by some node and not yet settled. */
  reserved: number;
  /** Waiting for their due time (delayed, or retries with a backoff). */
  delayed: number;
  /** In the dead set. */
  dead: number;
}

/** A job in the dead set, and why it is there. */
export interface DeadJob {
  /** The job as it was when it died. */
  job: JobRecord;
  /** Why: retries spent (with the last error), unknown task, malformed, poison job, ... */
  reason: string;
  /** Epoch ms when it went to the dead set. */
  diedAt: number;
}

/** A dead job of a workflow: a retry leaves it dead (its workflow recorded its failure when it died). */
export interface DeadWorkflowJob {
  /** The job's id. */
  id: string;
  /** Its workflow's id. */
  workflow: string;
}

/** What `changeDead` did to one queue's dead set. */
export interface DeadSetChange {
  /** Dead jobs requeued (retry) or dropped (delete). */
  count: number;
  /**
   * The ids asked for that matched a job requeued or dropped, each once, in
   * the order given (a job two of them name counts for the one given first).
   */
  moved: string[];
  /** retry: the workflows' jobs asked for by id (or every one), left dead, newest first; delete: none. */
  inWorkflow: DeadWorkflowJob[];
  /**
   * retry: the ids of dead jobs left dead because a job with the same id
   * waits, is delayed or runs (its own id enqueued again after it died, or
   * another dead copy of it requeued by this call), each once; delete: none.
   * Two live jobs of one id would share one place in the job index.
   */
  inUse: string[];
}

/** Which of a queue's jobs `listJobs` pages through. */
export type ListedState = 'waiting' | 'delayed' | 'dead';

/** One job of a page (`prefork jobs`, `prefork inspect scheduled`). */
export interface ListedJob {
  /** The job as stored. */
  job: JobRecord;
  /** delayed: epoch ms (the broker's clock) when it is due. */
  dueAt?: number;
  /** dead: why it died. */
  reason?: string;
  /** dead: epoch ms when it died. */
  diedAt?: number;
}

/** One page of a queue's jobs in one state. */
export interface JobPage {
  /** The jobs, in the state's order. */
  jobs: ListedJob[];
  /** Give it as `cursor` for the next page; undefined when nothing follows. */
  next: string | undefined;
}

/**
 * Where a job is before it ends, as the broker's job index says
 * (`Broker.locate`): ready in its queue, fetched by a node and not yet
 * settled, or waiting in the delayed set (a delayed job, or a retry).
 */
export interface JobLocation {
  /** The job's id. */
  id: string;
  /** Its queue. */
  queue: string;
  /**
   * waiting: ready in its queue; reserved: fetched by node `nodeId` (buffered
   * or running there) and not yet settled; delayed: due at `dueAt`.
   */
  state: 'waiting' | 'reserved' | 'delayed';
  /** The task's name. */
  task: string;
  /** Retries spent so far (a delayed job with attempt > 0 is a retry). */
  attempt: number;
  /** Times it went back to its queue without an outcome (given back, or recovered from a dead node). */
  redeliveries: number;
  /** Epoch ms at enqueue. */
  enqueuedAt: number;
  /** delayed: when it is due (epoch ms on the broker's clock). */
  dueAt?: number;
  /**
   * delayed: true when the job waits for its turn under a rate limit (a
   * `defer` settlement), not for a retry's backoff nor a delay it was
   * enqueued with; such a wait spends no retry.
   */
  rateLimited?: boolean;
  /** reserved: the id of the node that holds it. */
  nodeId?: string;
  /** reserved: when that node fetched it (epoch ms, approximate: the broker counts idle time). */
  reservedAt?: number;
}

/** What one wait for announced results brought (Broker.waitForResults). */
export interface AnnouncedResults {
  /** Final results announced to the client. */
  records: ResultRecord[];
  /** Announced ids whose result is no longer stored (expired after the result TTL, evicted, or dropped by a dead retry). */
  gone: string[];
  /**
   * Announcements may have been lost before this read took them: its reply
   * was lost with the connection, the connection was re-established since
   * the client's last read, or the bounded reply list dropped its oldest ids.
   * The client re-reads the stored results of every job it still waits for.
   */
  missed: boolean;
  /**
   * The connection was re-established since the client's last read: Redis
   * may have restarted and lost its data, so the client also asks where the
   * jobs it waits for without a stored result are.
   */
  reconnected?: boolean;
  /**
   * The read took as many announcements as one read takes: the list held a
   * backlog, longer than a dead retry scans for the failure it drops
   * (changeDead-3.lua), so the client checks the failures of this read and
   * the next against the stored results.
   */
  backlog?: boolean;
}

/** Opening and closing a broker handle: whoever creates one owns these. */
export interface BrokerConnection {
  /** The URL with any password masked, for banners and logs. */
  readonly displayUrl: string;
  /** The bound on its commands, in ms (BrokerOptions.commandTimeout), when it has one. */
  readonly commandTimeoutMs?: number;
  /**
   * Opens the connection; never hangs. Rejects with BrokerUnavailableError
   * when the broker cannot be reached or does not answer (Redis: within
   * 10 s), and with BrokerRefusedError when it refuses the connection itself
   * (Redis: a wrong or missing password, a database it does not have).
   */
  connect(): Promise<void>;
  /** Closes the connections; every call after it rejects with BrokerClosedError. */
  close(): Promise<void>;
}

/** Adds jobs (the Client). */
export interface BrokerProducer {
  /**
   * Adds jobs in one round trip: ready ones to their queue, delayed ones
   * (`delay`, `eta`) to the delayed set. Resolves with one entry per job:
   * undefined when it was added, or the id of the job it duplicates (its
   * `uniqueKey` is held by a job that has not ended, or its `ownId` is
   * known: not ended, or ended with its result still kept), and then it
   * was not added. `workflows` go in the same round trip, after the jobs:
   * each one whole or not at all (its record and the jobs of its first
   * steps); the steps after them are enqueued by whoever settles the step
   * before, atomically with that settlement. A workflow whose record
   * exists already (a call sent again after its reply was lost) is left as
   * it is: it never starts twice.
   */
  enqueue(jobs: readonly NewJob[], workflows?: readonly CompiledWorkflow[]): Promise<(string | undefined)[]>;
}

/** Reads stored results and waits for announced ones (the Client). */
export interface BrokerResults {
  /** The stored state and outcome of a job, or undefined when the broker knows nothing of it (or its result expired). */
  getResult(id: string): Promise<ResultRecord | undefined>;
  /**
   * Whether the broker is full, or nearly (Redis near its maxmemory): its
   * nodes may then hold outcomes it refused, so a job already acked can be
   * in no queue and without a result until there is room. A Client does
   * not give such a job up for gone meanwhile.
   */
  isFull(): Promise<boolean>;
  /** The stored results of `ids`, in their order (undefined where none is stored). */
  getResults(ids: readonly string[], options?: ResultReadOptions): Promise<(ResultRecord | undefined)[]>;
  /**
   * Blocks up to `timeoutMs` for results announced to `clientId`; returns
   * those that arrived (maybe none), the announced ids whose result is gone,
   * and whether this read may have missed announcements. An id it read is
   * gone from the reply list: if the call rejects, those ids are lost, and
   * the caller re-reads what it waits for (getResults), as after `missed`.
   * `signal` ends the wait early, as a timeout would (a closing Client).
   */
  waitForResults(clientId: string, timeoutMs: number, signal?: AbortSignal): Promise<AnnouncedResults>;
  /**
   * A workflow's state and outcome, with every node; undefined when unknown
   * (or expired). `getResult` of a workflow's id gives its outcome as a
   * ResultRecord (task `workflow`), and its end is announced to the client
   * that enqueued it.
   */
  getWorkflow(id: string): Promise<WorkflowRecord | undefined>;
}

/** How `getResults` reads. */
export interface ResultReadOptions {
  /**
   * Every id is a job's: the broker need not look for a workflow's outcome
   * under an id without a stored result (on Redis, a round trip saved).
   * @defaultValue false
   */
  jobsOnly?: boolean;
}

/** Finding one job wherever it waits (`handle.state()`, `prefork result`, revoking). */
export interface BrokerJobs {
  /**
   * Where the job `id` is while it waits, is delayed or is reserved by a
   * node; undefined once it ended (acked, dead, purged) or when it was never
   * enqueued. A few commands, however long the queues (the job index).
   */
  locate(id: string): Promise<JobLocation | undefined>;
  /**
   * Takes the job out of its queue or delayed set if it waits there (never
   * out of a node's reservation) and returns where it was; undefined when
   * it was not waiting (reserved, ended or unknown). Atomic: a job is never
   * both removed and fetched.
   */
  removeWaiting(id: string): Promise<JobLocation | undefined>;
}

/** Reserves jobs for a node and settles them (the Consumer and its Acker). */
export interface BrokerConsumer {
  /**
   * Settles `request.settle`, renews the node's lease, promotes due delayed
   * jobs, then reserves up to `count` jobs by the plan: one round trip.
   * Rejects with a BrokerRefusedError when the broker refuses the request
   * and would refuse it again (e.g. a queue's key holds another type: it
   * names the key when it can); any other rejection is worth retrying.
   */
  fetch(request: FetchRequest): Promise<FetchReply>;
  /**
   * Blocks until a job arrives on one of `queues` (returned, already reserved
   * by `nodeId`), `timeoutMs` passes, or `signal` aborts. No polling.
   * `count` caps how many jobs it may reserve (the free prefetch room; default 1).
   * `leaseHeld`, asked when jobs arrive: true while the node surely holds
   * its lease by its own clock (Heartbeat.leaseHeld), so the broker may hand
   * them over without confirming the lease first (one round trip less).
   * Rejects with a BrokerRefusedError as fetch() does.
   */
  waitForWork(
    nodeId: string,
    queues: readonly string[],
    timeoutMs: number,
    signal: AbortSignal,
    count?: number,
    leaseHeld?: () => boolean,
  ): Promise<WaitReply>;
  /**
   * Rejects with a BrokerRefusedError when the broker refuses these
   * settlements for good (sent again, they would fail the same way): the
   * Acker then isolates the one at fault. Any other rejection is transient:
   * they are sent again.
   */
  settle(settlements: readonly Settlement[]): Promise<void>;
  /**
   * Deliveries a fenced node dropped without settling them (another node
   * recovered their jobs): the broker stops tracking them as handed out.
   */
  forget?(deliveries: readonly Delivery[]): void;
}

/** Nodes, their leases and the recovery of a dead node's jobs (the Worker and its Heartbeat). */
export interface BrokerMembership {
  /** Lease length in ms: a node silent this long is presumed dead. */
  readonly leaseMs: number;
  /**
   * Registers a node and starts its lease. With `adoptFrom`, the node's
   * previous id (fenced while its lease still ran by its own clock, as when
   * Redis lost its data): the jobs still reserved under that id move to the
   * new one, whose lease covers them from then on; the old id leaves the
   * cluster. Not while the old id's lease is live. Resolves how many jobs moved.
   */
  register(node: NodeInfo, adoptFrom?: string): Promise<number>;
  /** Changes a live node's description (e.g. its concurrency after a resize); resolves false when it is not live. */
  updateNode(nodeId: string, update: NodeUpdate): Promise<boolean>;
  /**
   * Renews `nodeId`'s lease; the reply says whether it was fenced, which
   * leases expired, and what control requests wait for it. With `lead` the
   * node stands for leader: the beat renews or takes the leader lease and says who holds it.
   * Rejects with a BrokerRefusedError as fetch() does.
   */
  heartbeat(nodeId: string, queues: readonly string[], lead?: boolean): Promise<HeartbeatReply>;
  /** Who holds the leader lease, while it is live. */
  leader(): Promise<LeaderLease | undefined>;
  /** Moves every job reserved by `deadNodeId` back to its queue (or to the dead set past `maxRedeliveries`); returns how many. */
  recover(deadNodeId: string, byNodeId: string, maxRedeliveries: number): Promise<number>;
  /** Removes a node; the jobs it still holds go back to their queues. */
  unregister(nodeId: string): Promise<void>;
  /** The registered nodes whose lease is alive. */
  listNodes(): Promise<NodeInfo[]>;
}

/** Control requests to nodes and their replies (the CLI asks, a node's ControlHandler answers). */
export interface BrokerControl {
  /**
   * Posts `request` to each of `nodeIds` that is alive; returns the ids it
   * was posted to. A node takes its requests when woken (`watchControl`),
   * and at the latest with its next heartbeat (no extra command while
   * nothing waits); a request not taken within `ttlMs` is dropped.
   */
  sendControl(nodeIds: readonly string[], request: ControlRequest, ttlMs: number): Promise<string[]>;
  /**
   * Calls `wake(nodeId)` when a request is posted to a node: a hint to take it
   * at once (`takeControl`) rather than with the next heartbeat, which stays
   * the guarantee. Costs nothing while nothing is posted (Redis: a
   * subscription). Resolves to the function that stops watching.
   */
  watchControl(wake: (nodeId: string) => void): Promise<() => Promise<void>>;
  /** Takes the control requests waiting for `nodeId`. */
  takeControl(nodeId: string): Promise<ControlRequest[]>;
  /** Posts a node's reply to a control request, for the asker's `waitForControlReplies`. */
  replyControl(requestId: string, reply: ControlReply): Promise<void>;
  /** Waits up to `timeoutMs` for `count` replies to `requestId`; returns those that came. */
  waitForControlReplies(requestId: string, count: number, timeoutMs: number): Promise<ControlReply[]>;
}

/**
 * Revokes (`client.revoke`, `prefork revoke`): remembered cluster-wide for
 * `revokeTtl` (at most `revokeMax` ids), told to every live node at once,
 * loaded by a node when it registers.
 */
export interface BrokerRevokes {
  /** Most revoked ids remembered (`revokeMax`): a node keeps no more of them in memory. */
  readonly revokeMax: number;
  /**
   * Revokes each job not finished: stores its REVOKED result (announced to a
   * waiting client), takes it out of its queue or delayed set when it has not
   * been fetched, remembers its id and tells every live node (a control
   * request), which skips it when fetched or, with `terminate`, stops it.
   * The ids of jobs go first, all of them; an id no job has is then looked
   * up as a workflow's or a step's, so a step named before a job of its
   * workflow sees the workflow that job's revoke failed. One outcome per
   * distinct id, in the order given.
   */
  revoke(ids: readonly string[], options: RevokeOptions): Promise<RevokeOutcome[]>;
  /**
   * The revoked ids still remembered, oldest first; with `since`, only
   * those revoked at or after it (epoch ms, the broker's clock: a node that
   * may have missed revoke requests reads what is new since its last read).
   */
  listRevoked(since?: number): Promise<RevokedJob[]>;
}

/**
 * Paused queues, remembered cluster-wide: a node reads them when it
 * registers and is told of changes by a control request (`pause`, `resume`).
 */
export interface BrokerPauses {
  /** Pauses `queue` on every node (`node` undefined) or on the node named `node`; resolves false if it already was. */
  pauseQueue(queue: string, node?: string): Promise<boolean>;
  /**
   * Resumes `queue`: without `node` everywhere (its pauses on single nodes
   * go too), else on the node named `node` (a pause on every node stays).
   * Resolves how many pauses were lifted.
   */
  resumeQueue(queue: string, node?: string): Promise<number>;
  /** Every pause, by queue name then node. */
  listPaused(): Promise<PausedQueue[]>;
}

/** Queue counts, purges and the dead set (the CLI's admin commands). */
export interface BrokerAdmin {
  /** Every queue a job was ever enqueued to (for listings across queues). */
  knownQueues(): Promise<string[]>;
  /** Waiting, reserved, delayed and dead jobs of each queue. */
  counts(queues: readonly string[]): Promise<QueueCounts[]>;
  /**
   * Drops every waiting and delayed job of a queue; returns how many. A
   * workflow's member dropped fails in its workflow (`JobWithdrawnError`),
   * or its workflow would wait for ever. On Redis the jobs of no workflow
   * go a slice of 1,000 entries per script, so a large queue never holds
   * Redis for long: the call as a whole is not one atomic step (a job a
   * node fetches meanwhile is its node's, and stays).
   */
  purge(queue: string): Promise<number>;
  /** Up to `limit` dead jobs of a queue, newest first; a `limit` that is not an integer >= 0 is refused (OptionError). */
  listDead(queue: string, limit: number): Promise<DeadJob[]>;
  /**
   * Moves dead jobs back to their queue (attempt and redeliveries reset);
   * `ids` undefined = all. Returns how many. A workflow's job is never
   * moved: its workflow recorded its failure when it died (and went on or
   * ended), so a rerun would belong to nothing; nor is a job whose id a job
   * that waits, is delayed or runs has (see `changeDead`).
   */
  retryDead(queue: string, ids: readonly string[] | undefined): Promise<number>;
  /** Drops dead jobs of a queue: those with these ids, or every one (`ids` undefined). Returns how many. */
  purgeDead(queue: string, ids?: readonly string[]): Promise<number>;
  /**
   * Retries (as `retryDead`) or deletes (as `purgeDead`) dead jobs of a
   * queue, `ids` undefined = all, in one pass over its dead set however many
   * ids are given, and says which of the ids it moved and which workflow
   * jobs a retry left dead. An id dead twice (a job's own id reused) is
   * deleted both times; a retry requeues a dead job only while no job with
   * its id waits, is delayed or runs (so of an id dead twice, the oldest),
   * and names the others in `inUse`. A retry requeues id by id in the order given, each id's
   * oldest first (all: oldest first, up to the newest job dead when the
   * call began), as retrying one id at a time would. On Redis the set is
   * walked a slice of 1,000 entries per script, so a large dead set never
   * holds Redis for long: the call as a whole is not one atomic step.
   * Another `action`, or `ids` not an array of non-empty strings, is
   * refused with an OptionError before anything moves.
   */
  changeDead(queue: string, action: 'retry' | 'delete', ids: readonly string[] | undefined): Promise<DeadSetChange>;
  /**
   * Up to `limit` jobs of a queue in one state, from `cursor` (a previous
   * page's `next`; none: the first page), in O(limit), never reading the
   * queue whole: waiting in the order they will be fetched (redelivered
   * first), delayed by due time, dead newest first. Throws OptionError for
   * a cursor that is not one this broker made for that state.
   */
  listJobs(queue: string, state: ListedState, limit: number, cursor?: string): Promise<JobPage>;
}

/** A page of events read from the broker. */
export interface EventPage {
  /** Oldest first. */
  events: NodeEvent[];
  /** Where the next read goes on from (opaque). */
  position: string;
}

/** A node's outgoing events, as the writes its broker makes anyway carry them (the Worker's EventBuffer). */
export interface EventCarrier {
  /** The events the next write carries, a stream entry per batch; none while none are due. */
  take(): EventBatch[];
  /** The write that carried what take() gave reached the broker. */
  carried(): void;
  /** The write that carried these failed (with `reason`, when known): they are carried again later, ahead of newer events. */
  putBack(batches: readonly EventBatch[], reason?: unknown): void;
}

/**
 * The events stream (capped): nodes write to it, `prefork events` and
 * `Client.events()` read it. Best effort: events ride in writes that may fail.
 */
export interface BrokerEvents {
  /** Node side: the broker's writes (a fetch, a settlement) carry the events `carrier` holds, and tell it how each write went. */
  carryEvents(carrier: EventCarrier): void;
  /** Writes one node's events now, in one write. */
  publishEvents(batch: EventBatch): Promise<void>;
  /** The last `count` events (all when there are fewer), oldest first, and the position after them. */
  recentEvents(count: number): Promise<EventPage>;
  /** Events after `position`, waiting up to `timeoutMs` for some (0: no wait); `signal` ends the wait early. */
  readEvents(position: string, timeoutMs: number, signal?: AbortSignal): Promise<EventPage>;
}

/** One task's share of a bucket request: `count` starts, spaced `intervalMs` apart as the node sees it. */
export interface SlotRequest {
  /** The task whose bucket the starts come from. */
  task: string;
  /** Ms between two starts by the node's rate (the job's own or its task's); a rate set at run time wins. */
  intervalMs: number;
  /** How many starts (one per job, in the order the jobs were fetched). */
  count: number;
}

/** The starts a bucket gave: job i of the request starts `firstDelayMs + i × intervalMs` from now. */
export interface SlotGrant {
  /** Ms from now (on the broker's clock) of the first start; 0 or less: now. */
  firstDelayMs: number;
  /** Ms between the starts; 0: no limit applies (every job starts now). */
  intervalMs: number;
  /** The rate set at run time for the task ("100/s" or "off"), if any: the node follows it. */
  override: string | undefined;
}

/**
 * Cluster-wide rate limits (docs/architecture.md, "Rate limits"): one bucket
 * per task in the broker hands out start times spaced by the rate (GCRA), and
 * a rate set at run time is remembered there for every node.
 */
export interface BrokerRateLimits {
  /** Takes starts from the tasks' buckets, one grant per request, in order: one round trip. */
  acquireSlots(requests: readonly SlotRequest[]): Promise<SlotGrant[]>;
  /** The rates set at run time, by task ("100/s" or "off"). */
  rateLimits(): Promise<Map<string, string>>;
  /**
   * Sets a task's rate at run time for every node ("100/s", or "off": no
   * limit), remembered until changed. Jobs already waiting for their turn
   * are spaced again by the new rate (with "off": due now). Returns how many
   * were. "default" drops the rate set at run time: jobs follow their own
   * `rateLimit`, or their task's, again; those waiting keep their turns (0).
   */
  setRateLimit(task: string, rate: string): Promise<number>;
}

/**
 * A whole broker: every role. `createBroker` returns one; each part of
 * prefork depends on the roles it uses only.
 */
export interface Broker
  extends
    BrokerConnection,
    BrokerProducer,
    BrokerResults,
    BrokerJobs,
    BrokerConsumer,
    BrokerMembership,
    BrokerControl,
    BrokerRevokes,
    BrokerPauses,
    BrokerAdmin,
    BrokerEvents,
    BrokerRateLimits,
    BrokerSchedule {}

/**
 * Settings common to both brokers: the second argument of `createBroker`
 * (the Worker and the Client pass theirs). A bad one throws an OptionError naming it.
 */
export interface BrokerOptions {
  /**
   * Key namespace (Redis hash tag `{<namespace>}`; for memory://, part of
   * the name): producers and workers must share it. A non-empty string
   * without braces or spaces, in which no part after a ":" is `res`,
   * `reply`, `ctl-wake` or `ctl-reply`: results and reply lists are keyed
   * `<namespace>:res:<job id>`, outside the tag, so namespace `app:res`
   * would share keys with namespace `app`.
   * @defaultValue `"prefork"`
   */
  namespace?: string;
  /**
   * How long results are kept, in ms (at most 100 years), unless a job
   * carries its own `resultTtl` (set by a Client).
   * @defaultValue 86400000 (1 day)
   */
  resultTtl?: number;
  /**
   * Node lease in ms: a node silent this long is presumed dead and its jobs
   * recovered. Heartbeats renew it every half of it. At least 1000 (1 s),
   * at most 2^31-1.
   * @defaultValue 20000 (20 s)
   */
  leaseMs?: number;
  /**
   * Dead jobs kept per queue (an integer >= 0); the oldest go first.
   * @defaultValue 10000
   */
  deadMax?: number;
  /**
   * How long a revoked job id is remembered (ms, or "1d"): a node that
   * fetches the job within this time skips it.
   * @defaultValue 86400000 (1 day)
   */
  revokeTtl?: number | string;
  /**
   * Most revoked ids remembered (an integer >= 1); the oldest go first. Every
   * node keeps them in memory (about 100 bytes each).
   * @defaultValue 100000
   */
  revokeMax?: number;
  /**
   * Writes kept in the events stream (each holds the events of one write
   * of a node, up to 256); the oldest go first.
   * @defaultValue 1000
   */
  eventsMaxLen?: number;
  /**
   * How long a command waits for Redis to answer (ms or "10s"), or `false`
   * for no bound: once Redis has sent nothing for this long while a command
   * waits (a Redis that is stopped, overloaded or out of reach), the call
   * rejects with BrokerTimeoutError, which says that what was sent may or
   * may not have been applied. Counted from Redis's last reply, so a long
   * batch that Redis answers command by command is not cut. Blocking waits
   * (results, control replies, events) are not bounded by it. For a
   * producer's or a tool's broker (the Client sets it on the broker it
   * opens, 10 s by default; so does every one-shot CLI command): a Worker
   * refuses a broker with one, since a fetch cut short that Redis runs
   * later would leave the jobs it reserved with no one to run them (a
   * Worker rides out a frozen Redis with its leases). The memory broker,
   * which cannot stop answering, ignores it.
   * @defaultValue none: commands wait for their reply
   */
  commandTimeout?: number | string | false;
  /**
   * A pino logger; the broker logs through a child of it.
   * @defaultValue pino on stdout at `info` (`$PREFORK_LOG_LEVEL` overrides), or the CLI's logger
   */
  logger?: import('pino').Logger;
}

/**
 * The broker's side of periodic tasks (`defineSchedule`): each entry's
 * definition and the latest tick handled, shared by every node that runs
 * the entry. A tick fires by a compare-and-set on that state, with its job
 * enqueued in the same atomic step, so it fires once whatever the number of
 * nodes and their clocks. Times are epoch ms on the broker's clock.
 */

/** One entry as a node publishes it: its definition (JSON) and the hash nodes compare. */
export interface ScheduleDefinition {
  /** The entry's name. */
  name: string;
  /** The definition, JSON (what another node needs to run it). */
  definition: string;
  /** A hash of `definition`. */
  hash: string;
  /**
   * The latest tick this node saw handled (broker's clock), when it stores
   * the entry again because its state vanished (Redis lost its data, or the
   * leader dropped it meanwhile): with no state stored, it resumes from
   * there, so the ticks since follow the misfire rule instead of being lost.
   */
  since?: number;
}

/** An entry's shared state. */
export interface ScheduleState {
  /** The entry's name. */
  name: string;
  /** The hash of the definition in force. */
  hash: string;
  /** The latest tick handled (fired, or skipped as a misfire), epoch ms on the broker's clock. */
  last: number;
  /** The definition in force (JSON): given when it differs from the caller's, and by listSchedule. */
  definition?: string;
  /** The tick the last job enqueued stands for. */
  lastTick?: number;
  /** When that job was enqueued (broker's clock). */
  lastRunAt?: number;
  /** That job's id. */
  lastJobId?: string;
  /**
   * Set by listSchedule when the stored state does not read (another program
   * wrote it): what is wrong. The times it names are left out (`last` then
   * reads 0, `definition` ''); a node running the entry stores it again at
   * its next claim.
   */
  damaged?: string;
}

/** A claim of an entry's due ticks: `jobs` are enqueued and `last` becomes `newLast`, if the state is still `expectedLast` under `hash`. */
export interface TickClaim {
  /** The entry's name. */
  name: string;
  /** The hash of the definition the jobs were built from. */
  hash: string;
  /** The latest tick handled as the caller knows it. */
  expectedLast: number;
  /** The latest tick handled after this claim: later than `expectedLast`, at most the broker's now. */
  newLast: number;
  /** One job per tick fired, each with its `scheduledFor` (none: the ticks are skipped). */
  jobs: NewJob[];
}

/**
 * How a claim went: `claimed` (done), `stale` (another node handled these
 * ticks, or the definition changed: `state` says what is in force),
 * `early` (`newLast` is ahead of the broker's clock), `unknown` (no state:
 * publish the entry again), `refused` (the broker cannot enqueue the jobs:
 * `reason` says why; nothing changed).
 */
export type ClaimOutcome = 'claimed' | 'stale' | 'early' | 'unknown' | 'refused';

/** The answer to a claimTicks call. */
export interface ClaimReply {
  /** The broker's clock minus this process's, as read with the reply (the reply's latency makes it smaller, never larger). */
  skew: number;
  /** Per claim, in order. */
  results: ClaimResult[];
}

/** How one claim went. */
export interface ClaimResult {
  /** See ClaimOutcome. */
  outcome: ClaimOutcome;
  /** The entry's state in force (all but `unknown`). */
  state?: ScheduleState;
  /** Why the jobs could not be enqueued (`refused`), e.g. their queue's key holds another type. */
  reason?: string;
}

/** The answer to a publishSchedule call. */
export interface PublishReply {
  /** As ClaimReply's. */
  skew: number;
  /** The state of each published entry, in order, with the definition in force. */
  states: ScheduleState[];
}

/** Schedule entries and their ticks (a Worker with a `schedule`, and `prefork schedule`). */
export interface BrokerSchedule {
  /**
   * Stores these definitions (a changed or new one replaces what is stored,
   * and starts from the broker's now: its next tick fires, none missed before;
   * one with no state stored and a `since` resumes from it, at most now).
   * Returns each entry's state.
   */
  publishSchedule(entries: readonly ScheduleDefinition[]): Promise<PublishReply>;
  /** Claims due ticks of several entries in one atomic step each, enqueuing their jobs with them (found by `locate`, revocable, as any enqueued job). */
  claimTicks(claims: readonly TickClaim[]): Promise<ClaimReply>;
  /** Every stored entry's state and definition, by name. */
  listSchedule(): Promise<ScheduleState[]>;
  /** The names of the stored entries (cheaper than listSchedule). */
  scheduleNames(): Promise<string[]>;
  /** Forgets entries (no node runs them any more); returns how many were stored. */
  dropSchedule(names: readonly string[]): Promise<number>;
  /**
   * The leader's housekeeping: forgets the entries no live node registered,
   * in one atomic step and only while `leader` still holds the leader lease
   * (a leader stalled past its lease would find no live node and drop the
   * entries every node runs). Returns the names dropped.
   */
  dropUnusedSchedule(leader: LeaderLease): Promise<string[]>;
}

// Workflows: what the Client compiles and a broker keeps (src/workflow/ makes and reads them).

/** What a node of a compiled workflow is: a job, or how its children run. A chord runs as a chain of its group and callback. */
export type WorkflowNodeKind = 'task' | 'chain' | 'group' | 'chord';

/**
 * One node of a compiled workflow. Nodes are numbered breadth-first from the
 * root (0), so the children of a node are `first .. first + count - 1`;
 * callbacks (onSuccess, onError) come after the tree, with no parent.
 */
export interface WorkflowNode {
  /** A job, or how its children run. */
  kind: WorkflowNodeKind;
  /** The parent's index; -1 for the root and for callbacks. */
  parent: number;
  /** Place among the parent's children. */
  pos: number;
  /** First child (-1 for a task). */
  first: number;
  /** Number of children (0 for a task). */
  count: number;
  /** task: the job it enqueues when it starts (its payload: the signature's own arguments). */
  job?: NewJob;
  /** task: its queue, as an index into `CompiledWorkflow.queues`. */
  queue: number;
  /** task: it ignores the previous step's result. */
  immutable: boolean;
  /** task: the node of its onSuccess callback, or -1. */
  onSuccess: number;
  /** task: the node of its onError callback, or -1. */
  onError: number;
}

/** A workflow ready to enqueue: every node, and the queues its jobs go to. */
export interface CompiledWorkflow {
  /** The workflow's id (its handle's). */
  id: string;
  /** Every node, the root first. */
  nodes: WorkflowNode[];
  /** The queues of its jobs: a node's job can be enqueued by whichever node settles the step before it. */
  queues: string[];
  /** The client to tell when the workflow ends ('' or undefined: none). */
  replyTo?: string;
  /** How long its records are kept after its last change (ms); the broker's result TTL when undefined. */
  ttlMs?: number;
}

/** Where a job sits in a workflow: carried in its entry, so whoever settles it knows what comes next. */
export interface WorkflowRef {
  /** The workflow's id. */
  id: string;
  /** The job's node in the workflow. */
  node: number;
  /** The workflow's queues (the next steps may go to any of them). */
  queues: readonly string[];
}

/** A step that failed for good, as the workflow keeps it (and as an onError callback receives it). */
export interface StepFailure {
  /** The failed job's id. */
  id: string;
  /** Its task's name. */
  name: string;
  /** What it threw. */
  error: { name: string; message: string; code?: string };
}

/** How a workflow's job (or a node) ended for good. */
export type StepOutcome = { ok: true; value: unknown } | { ok: false; failure: StepFailure };

/** A workflow's state: `PENDING` until its root ends. */
export type WorkflowState = 'PENDING' | 'SUCCESS' | 'FAILURE';

/** One node of a workflow as the broker keeps it. */
export interface WorkflowNodeRecord {
  /** Its index (the root is 0). */
  index: number;
  /** A job, or how its children run. */
  kind: WorkflowNodeKind;
  /** The parent's index; -1 for the root and for callbacks. */
  parent: number;
  /** Place among the parent's children. */
  pos: number;
  /** First child (-1 for a task). */
  first: number;
  /** Number of children. */
  count: number;
  /** task: its job's id. */
  jobId?: string;
  /** task: the task's name. */
  task?: string;
  /** task: its queue. */
  queue?: string;
  /** task: the node of its onSuccess callback, or -1. */
  onSuccess: number;
  /** task: the node of its onError callback, or -1. */
  onError: number;
  /** How it ended, once it did. */
  ended?: StepOutcome;
  /** task: its job waits, is delayed or is held by a node now. */
  placed?: boolean;
}

/** A workflow as `getWorkflow` reads it. */
export interface WorkflowRecord {
  /** The workflow's id. */
  id: string;
  /** PENDING until its root ends. */
  state: WorkflowState;
  /** The root's value (SUCCESS). */
  value?: unknown;
  /** The step whose failure ended it (FAILURE). */
  failure?: StepFailure;
  /** The outermost group the failure went through (undefined: a chain step failed outside any group). */
  failedGroup?: number;
  /** Every node (`getWorkflow` reads them; a record read as an outcome has none). */
  nodes?: WorkflowNodeRecord[];
}
