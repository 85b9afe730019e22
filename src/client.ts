import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { checkNamespace, DEFAULT_COMMAND_TIMEOUT_MS } from './broker/broker-options.js';
import { defaultBrokerUrl } from './broker/default-url.js';
import { createBroker } from './broker/index.js';
import { isFinalState } from './broker/job-state.js';
import { DEFAULT_REVOKE_GRACE_MS } from './broker/revoke-record.js';
import type {
  BrokerConnection,
  BrokerEvents,
  BrokerJobs,
  BrokerProducer,
  BrokerResults,
  BrokerRevokes,
  NewJob,
  ResultRecord,
  RevokeOutcome,
} from './broker/types.js';
import { checkEventsOptions, followEvents, type EventsOptions } from './events/follow.js';
import type { NodeEvent } from './events/node-event.js';
import { jobStatus } from './job-status.js';
import { BatchedReads } from './util/batched-reads.js';
import {
  ArgumentsTooLargeError,
  BrokerClosedError,
  BrokerRefusedError,
  BrokerUnavailableError,
  ArgumentSerializationError,
  ClientClosedError,
  EnqueueIncompleteError,
  JobFailedError,
  NoResultError,
  OptionError,
  ResultGoneError,
  ResultTimeoutError,
  RevokedError,
} from './errors.js';
import {
  checkDelay,
  checkEta,
  checkJobOptionFields,
  checkJobId,
  isWellFormed,
  checkKnownKeys,
  type Bad,
  waitTimeout,
  checkResultTtl,
  throwOptionError as bad,
} from './job-option-checks.js';
import { defaultClientLogger } from './logger.js';
import type { ArgsThenOptions, TaskArgs, TaskName, TaskResult } from './task-types.js';
import type { TaskRegistry } from './tasks.js';
import { encodeBody } from './protocol/codec.js';
import { deserializeError } from './protocol/error-codec.js';
import { DEFAULT_MAX_FRAME_SIZE, jobFrameSize, MAX_FRAME_SIZE } from './protocol/job-frame.js';
import { retryDelay, type BackoffPolicy } from './util/backoff.js';
import { abortableSleep } from './util/sleep.js';
import { checkDuration, checkSize } from './util/units.js';
import { compileWorkflow, type CompiledWorkflow } from './workflow/compile.js';
import { Chain, Chord, Group, isWorkflowPart, type WorkflowPart } from './workflow/parts.js';
import { Signature, type EnqueueOptions, type UniqueOptions } from './enqueue-options.js';

export type { EnqueueOptions, UniqueOptions } from './enqueue-options.js';
import type { WorkflowView } from './workflow/view.js';
import { readWorkflowView, WorkflowHandle } from './workflow/handle.js';
import type { RevokeJobOptions } from './revoke-job-options.js';
import { isRecord } from './util/is-record.js';

export type { RevokeJobOptions } from './revoke-job-options.js';

/** The broker roles a Client uses: it enqueues, reads results, finds jobs, revokes them and reads events. */
export type ClientBroker = BrokerConnection &
  BrokerProducer &
  BrokerResults &
  BrokerJobs &
  BrokerRevokes &
  BrokerEvents;

/** What `new Client(options)` accepts; a bad one throws an OptionError naming it. */
export interface ClientOptions {
  /**
   * A broker URL (`redis://`, `rediss://`, `memory://[name]`) or a Broker
   * instance (which the client then does not close).
   * @defaultValue `$PREFORK_BROKER_URL`, else `redis://127.0.0.1:6379`
   */
  broker?: string | ClientBroker;
  /**
   * The broker's key namespace, when `broker` is a URL: the workers' one, or
   * they never see the jobs. A broker object brings its own
   * (`createBroker(url, { namespace })`): beside one, this is refused.
   * @defaultValue `"prefork"`
   */
  namespace?: string;
  /**
   * How long the results of this client's jobs are kept (ms or "1d", up to
   * 100 years): sent with each job, the worker keeps its results that long
   * instead of its own `resultTtl`. An enqueue's `resultTtl` overrides it.
   * @defaultValue the workers' `resultTtl` (1 day unless set)
   */
  resultTtl?: number | string;
  /**
   * Largest job a child can receive: the workers' `maxFrameSize` (a Pool
   * option). A job whose arguments would not fit is refused at enqueue with
   * ArgumentsTooLargeError, instead of failing on a worker. Bytes, or a
   * string like "64MiB"; at most 2^32-1 bytes (a frame's length is 4 bytes).
   * @defaultValue 64 MiB (the Pool's default)
   */
  maxFrameSize?: number | string;
  /**
   * How long a call waits for Redis to answer (ms or "10s"), or `false` for
   * no bound, when `broker` is a URL. Once Redis has sent nothing for this
   * long while a command of an enqueue, a read (`getResult`, `state()`,
   * `progress()`), a revoke or `close()` waits for its reply (a Redis that
   * is stopped, overloaded or out of reach), the call rejects with
   * BrokerTimeoutError, which says that what was sent may or may not have
   * been applied: Redis runs what it received if it resumes, and the client
   * works again then. Counted from Redis's last reply, not from the call: a
   * large `enqueueMany`, answered batch by batch, is not cut. Waits are not
   * bounded by it: `result({ timeout })` bounds a wait. A broker object
   * brings its own bound (`createBroker(url, { commandTimeout })`): a
   * Worker refuses a bounded broker, so a broker object shared with a
   * Worker has none.
   * @defaultValue 10000 (10 s, as long as a connect may take)
   */
  commandTimeout?: number | string | false;
  /**
   * Where the client logs (a pino logger).
   * @defaultValue pino on stderr at `warn` (`$PREFORK_LOG_LEVEL` overrides): nothing on the application's stdout
   */
  logger?: Logger;
}

const UNIQUE_KEYS = new Set(['key', 'ttl']);
const REVOKE_KEYS = new Set(['terminate', 'grace']);
const CLIENT_KEYS = new Set(['broker', 'namespace', 'resultTtl', 'maxFrameSize', 'commandTimeout', 'logger']);
const ENQUEUE_KEYS = new Set([
  'queue',
  'delay',
  'eta',
  'retries',
  'backoff',
  'id',
  'ignoreResult',
  'resultTtl',
  'timeLimit',
  'softTimeLimit',
  'unique',
  'rateLimit',
  'onSuccess',
  'onError',
]);
/** Options of a workflow step that the step's job does not take (the workflow does). */
const STEP_ONLY = new Set(['immutable', 'onSuccess', 'onError']);
/**
 * Most results kept that were announced to this client before anyone asked
 * for them (the oldest go first). Only a shortcut: a waiter that misses one
 * reads the stored result instead.
 */
const ARRIVED_MAX = 1_000;
/** Most ids remembered as already handed to a waiter, so a second announcement of one is dropped. */
const DELIVERED_MAX = 10_000;
const WAIT_SLICE_MS = 5_000;
/**
 * A job's first wait this soon after this client enqueued it skips the look
 * at the stored result (two reads; with a worker in the same process, on the
 * job's own path): its announcement is still to come, or waits in the reply
 * list (kept at least this long after its last push), or is parked in
 * `arrived`, unless one was pushed out since (EnqueueTicket). Should it
 * never come anyway, the wait looks after a slice (`unlooked`).
 */
const SKIP_FIRST_LOOK_MS = 1_000;
/** Re-reads of a result enqueued elsewhere: 0.1 s doubling to 2 s. */
const FOREIGN_POLL: BackoffPolicy = { delay: 100, cap: 2_000 };
/** More than the fixed part of a JOB frame takes besides the arguments and its strings (task, id, queue). */
const FRAME_FIELDS_MAX = 256;
/** Second looks for jobs found nowhere sent together (each is two round trips). */
const LOOKS_AT_ONCE = 100;
/** Stands in `arrived` for an announced id whose result was gone when it was read. */
const GONE = Symbol('gone');
/** A re-read's answer for an id whose stored result the broker refused: its waits failed with that. */
const REFUSED = Symbol('refused');
/** Pauses after failed reads of the reply list in a row: 0.5 s doubling to 5 s (close() cuts one short). */
const LISTEN_RETRY: BackoffPolicy = { delay: 500, cap: 5_000 };

/** When a handle's job was enqueued, and how many parked results had been pushed out by then. */
interface EnqueueTicket {
  at: number;
  evictions: number;
}

interface Waiter {
  resolve: (r: ResultRecord) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout | undefined;
}

/** The `unique` option checked: the lock name of a key of yours (`k:` + key, apart from the default's `a:`) and the ttl in ms. */
function checkUnique(unique: unknown): { key?: string; ttl?: number } {
  if (unique === true) return {};
  if (typeof unique !== 'object' || unique === null || Array.isArray(unique))
    bad('unique', unique, 'true, or { key?: string, ttl?: duration }');
  checkKnownKeys(unique, UNIQUE_KEYS, 'unique option', bad);
  const out: { key?: string; ttl?: number } = {};
  if (Object.hasOwn(unique, 'key') && (unique as UniqueOptions).key !== undefined) {
    const key = (unique as UniqueOptions).key;
    // Well-formed: Redis would store a lone surrogate as U+FFFD, making two keys one (isWellFormed).
    if (typeof key !== 'string' || key === '' || !isWellFormed(key))
      bad('unique.key', key, 'a non-empty string (well-formed Unicode: no lone surrogate)');
    out.key = `k:${key}`;
  }
  if (Object.hasOwn(unique, 'ttl') && (unique as UniqueOptions).ttl !== undefined)
    out.ttl = checkDuration('unique.ttl', (unique as UniqueOptions).ttl, 'expiry', bad);
  return out;
}

/**
 * A signature's options as its job takes them (without what the workflow
 * handles). fromEntries defines each key as an own property: a `__proto__`
 * key (JSON.parse makes one) stays a key, refused as unknown by the checks,
 * where an assignment would set the copy's prototype.
 */
function stepOptions(sig: Signature): EnqueueOptions {
  return Object.fromEntries(Object.entries(sig.options).filter(([key]) => !STEP_ONLY.has(key)));
}

/** A lone signature's options as enqueue takes them (callbacks kept: they make it a workflow). */
function jobOptionsOf(sig: Signature): EnqueueOptions {
  return Object.fromEntries(Object.entries(sig.options).filter(([key]) => key !== 'immutable'));
}

/** One job to enqueue, as enqueueMany's items are once checked (checkItem). */
interface Item {
  name: string;
  args?: readonly unknown[];
  options?: EnqueueOptions | null;
}

const ITEM_KEYS = new Set(['name', 'args', 'options']);

/**
 * The shape of enqueueMany's item `at` (build checks the values): a
 * misspelt key (`arg`) would otherwise enqueue the job without what it names.
 */
function checkItem(item: unknown, at: number): void {
  const badItem: Bad = (option, value, expected) => {
    throw new OptionError(option, value, expected, `enqueueMany() items[${at}]`);
  };
  if (!isRecord(item)) badItem('item', item, 'an object: { name, args?, options? }');
  checkKnownKeys(item, ITEM_KEYS, 'item key', badItem);
  const { options } = item;
  if (options !== undefined && options !== null && !isRecord(options))
    badItem('options', options, 'an object of enqueue options');
}

/** `make()` for enqueueMany's item `at`: with `named`, an OptionError it throws names the item. */
function ofItem<T>(at: number, named: boolean, make: () => T): T {
  try {
    return make();
  } catch (err) {
    if (!named || !(err instanceof OptionError)) throw err;
    const where = `enqueueMany() items[${at}]`;
    throw new OptionError(
      err.option,
      err.value,
      err.expected,
      err.where === undefined ? where : `${where} ${err.where}`,
    );
  }
}

/** A partly failed enqueue's rejection, with what became of each item (`ids()`: their jobs' or workflows', in order). */
function byItem(ids: () => readonly string[]): (err: unknown) => never {
  return (err) => {
    throw err instanceof EnqueueIncompleteError ? err.withItems(ids()) : err;
  };
}

/**
 * A parked outcome that `dead retry` may have taken back since: a failure
 * (a job that fails for good goes to the dead set) or a result read gone (a
 * retry drops it). A success or a revoke is never taken back.
 */
function takenBackMaybe(outcome: ResultRecord | typeof GONE): boolean {
  return outcome === GONE || outcome.state === 'FAILURE';
}

function closedWhileWaiting(id: string): ClientClosedError {
  return new ClientClosedError(`the client was closed while waiting for job ${id}`);
}

/**
 * A job that was enqueued: its id, and its result when it has one.
 * @template T what the task resolves with (`unknown` unless the client is typed)
 */
export class JobHandle<T = unknown> {
  /** Made by `Client.enqueue`, `enqueueMany` and `handle`, not by hand. */
  constructor(
    /** The job's id. */
    readonly id: string,
    private readonly client: Client,
    /** Enqueued with `ignoreResult`: `result()` rejects with NoResultError. */
    readonly ignoreResult: boolean,
    /** Enqueued by this client, so its result will be announced here. */
    private readonly announced: boolean,
    /**
     * Enqueueing added nothing: this is the handle of the job it duplicates
     * (the same `unique` key, or the same own `id`), enqueued before.
     */
    readonly duplicate = false,
  ) {}

  /**
   * Resolves with the task's value once the job succeeded; rejects with its
   * final error (rebuilt: a RemoteTaskError, or prefork's own class such as
   * TimeLimitExceeded), ResultTimeoutError past `timeout` (ms or "30s"; by
   * default it waits for ever), NoResultError for a job enqueued with
   * ignoreResult (at once) or whose task is defined with it (when the job
   * ends), ResultGoneError when the result expired or (a job this client
   * enqueued, or a duplicate's) the job is nowhere: purged, expired with its
   * announcement, or ended keeping no result (a duplicate of a job enqueued
   * with ignoreResult),
   * ClientClosedError on close(), BrokerClosedError when a broker object
   * the client was given is closed while it waits.
   * Typed from the task module with `Client<typeof tasks>`; `result<T>()`
   * names the type yourself.
   */
  async result<U = T>(options: { timeout?: number | string } = {}): Promise<NoInfer<U>> {
    if (this.ignoreResult) throw new NoResultError(this.id);
    const record = await this.client.waitForHandle(this, waitTimeout(options, bad), this.announced);
    if (record.state === 'REVOKED') throw record.error ? deserializeError(record.error) : new RevokedError(this.id);
    if (record.ignoreResult === true) throw new NoResultError(this.id, record);
    if (record.state === 'SUCCESS') return record.value as NoInfer<U>;
    throw record.error ? deserializeError(record.error) : new JobFailedError(this.id);
  }

  /**
   * Where the job is now: PENDING (waiting in `queue`, or delayed until
   * `dueAt`), RECEIVED (fetched by `node`, not started, or started on a node
   * that does not track starts), STARTED (running on `node`, child `pid`,
   * since `startedAt`: with `trackStarted`), RETRY (attempt `retries + 1`
   * failed, the next is due at `dueAt`), SUCCESS or FAILURE with the
   * outcome; undefined when the broker knows nothing of the id (never
   * enqueued, or ended and its result expired or never kept).
   */
  state(): Promise<ResultRecord | undefined> {
    return this.client.getState(this.id);
  }

  /** Revokes this job (see `Client.revoke`). */
  revoke(options: RevokeJobOptions = {}): Promise<RevokeOutcome> {
    return this.client.revoke(this.id, options);
  }

  /**
   * The last progress the task reported (`currentTask().progress(value)`)
   * and when the node received it (epoch ms); undefined while it has
   * reported none, or once its record expired (or the job ignores results).
   */
  async progress(): Promise<ProgressReport | undefined> {
    const record = await this.client.getResult(this.id);
    return record?.progressAt === undefined ? undefined : { value: record.progress, at: record.progressAt };
  }
}

/** The last progress a job reported (`JobHandle.progress()`). */
export interface ProgressReport {
  /** The value the task gave `currentTask().progress()`. */
  value: unknown;
  /** Epoch ms when the node received it. */
  at: number;
}

/** One job of `enqueueMany`: a task name, its arguments (left out when it takes none) and options. */
export type EnqueueItem<R extends TaskRegistry = TaskRegistry> = {
  [N in TaskName<R>]: {
    /** The task's name. */
    name: N;
    /** The job's options. */
    options?: EnqueueOptions;
  } & ([] extends TaskArgs<R, N>
    ? {
        /** The task's arguments (optional: it takes none). */
        args?: TaskArgs<R, N>;
      }
    : {
        /** The task's arguments. */
        args: TaskArgs<R, N>;
      });
}[TaskName<R>];

/**
 * The producer API: enqueue jobs from any process or machine, and wait for
 * their results. Results of this client's jobs are announced to it on one
 * reply list, so waiting costs one blocking read, however many jobs.
 * @template R the task module's type (`new Client<typeof tasks>()`, or
 * `client.typed<typeof tasks>()`): task names, arguments and results are
 * then checked at compile time. Without it, any name and arguments go.
 */
export class Client<R extends TaskRegistry = TaskRegistry> {
  /** A random id: the name of this client's reply list, where its jobs' results are announced. */
  readonly id = randomUUID();
  /** The broker it enqueues to: the one given, or the one it opened for a URL (and closes on close()). */
  readonly broker: ClientBroker;
  private readonly ownsBroker: boolean;
  private readonly log: Logger;
  private connected: Promise<void> | undefined;
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly arrived = new Map<string, ResultRecord | typeof GONE>();
  /** Results pushed out of `arrived` so far. */
  private evictions = 0;
  /** The handles this client made for the jobs it enqueued, until their first wait. */
  private readonly tickets = new WeakMap<JobHandle, EnqueueTicket>();
  /** Ids whose wait skipped its first look (SKIP_FIRST_LOOK_MS), with when it began. */
  private readonly unlooked = new Map<string, number>();
  /**
   * Waited-for ids of this client's jobs found nowhere (no queue, no node,
   * no result), with when (a slice ahead, after a look while the broker was
   * full): looked at again a slice later, and if still nowhere their waits
   * fail (lookAgainNowhere). Once is not enough: a job is in neither place
   * between its node's ack and its result's write.
   */
  private readonly nowhere = new Map<string, number>();
  /** Ids recently handed to a waiter (insertion order = age). */
  private readonly delivered = new Set<string>();
  /** The stored results waits look at (a first look, a foreign job's poll), read together per turn. */
  private readonly looks = new BatchedReads<ResultRecord | undefined>(
    (ids) => this.broker.getResults(ids),
    // Every id's read would fail alike: not split (see BatchedReads).
    (err) => err instanceof BrokerUnavailableError || err instanceof BrokerClosedError,
  );
  private listening: Promise<void> | undefined;
  private closed = false;
  /** The first close()'s work, which every call of close() resolves with. */
  private closeCall: Promise<void> | undefined;
  /** Announcements may have been lost (a failed or cut read): re-read every pending result before the next read. */
  private rereadPending = false;
  /**
   * The reply list's connection failed or was replaced: Redis may have lost
   * its data (a restart without persistence), and with it the jobs waited
   * for. The re-read then asks where those without a result are (lookWhere).
   */
  private findPending = false;
  /** Ids waited for as this client's own jobs (announced here), which lookWhere may find gone. */
  private readonly own = new Set<string>();
  /**
   * Workflows waited for, and when they were last read: a workflow's end is
   * announced after the script that ended it, so an announcement lost with
   * its node is made up for by re-reading them once per wait slice.
   */
  private readonly flows = new Map<string, number>();
  private flowsReadAt = 0;
  /** Aborted by close(): ends the pause between reads at once. */
  private readonly closing = new AbortController();
  private readonly maxFrameSize: number;
  /** Sent with each job that keeps results, when set. */
  private readonly resultTtl: number | undefined;

  /** Validates the options (OptionError names a bad one); connects on first use. */
  constructor(options: ClientOptions = {}) {
    if (typeof options !== 'object' || options === null) bad('options', options, 'an object');
    checkKnownKeys(options, CLIENT_KEYS, 'Client option', bad);
    const broker = options.broker ?? defaultBrokerUrl();
    this.ownsBroker = typeof broker === 'string';
    const base = options.logger ?? defaultClientLogger();
    this.log = base.child({ component: 'client' });
    this.resultTtl = options.resultTtl === undefined ? undefined : checkResultTtl('resultTtl', options.resultTtl, bad);
    if (options.namespace !== undefined) checkNamespace('namespace', options.namespace, bad);
    // Ignored, it would send the jobs to the broker object's namespace, where the workers of this one never look.
    if (options.namespace !== undefined && typeof broker !== 'string')
      bad(
        'namespace',
        options.namespace,
        'no namespace with a broker object: give it to createBroker(url, { namespace })',
      );
    // Set on a broker object itself: on the one this client opens, it bounds only this client's calls.
    if (options.commandTimeout !== undefined && typeof broker !== 'string')
      bad(
        'commandTimeout',
        options.commandTimeout,
        'no commandTimeout with a broker object: give it to createBroker(url, { commandTimeout })',
      );
    this.maxFrameSize =
      options.maxFrameSize === undefined
        ? DEFAULT_MAX_FRAME_SIZE
        : checkSize('maxFrameSize', options.maxFrameSize, bad, MAX_FRAME_SIZE);
    this.broker =
      typeof broker === 'string'
        ? createBroker(broker, {
            namespace: options.namespace,
            logger: base,
            commandTimeout: options.commandTimeout ?? DEFAULT_COMMAND_TIMEOUT_MS,
          })
        : broker;
  }

  /**
   * Enqueues one job; `args` may be left out when the task takes none.
   * Rejects with OptionError for a bad name or option, ArgumentSerializationError
   * when the arguments do not encode, ArgumentsTooLargeError past
   * `maxFrameSize` or Redis's `proto-max-bulk-len`, ClientClosedError after close(), BrokerUnavailableError
   * when the broker cannot be reached (or does not answer within 10 s of
   * connecting; BrokerOfflineError, one of them, when the connection dropped
   * and did not come back within two reconnects: the job was not sent, so
   * enqueueing it again is safe), BrokerTimeoutError (a BrokerUnavailableError) when it
   * stops answering (`commandTimeout`: the job may or may not be queued),
   * BrokerRefusedError when it refuses the connection (a wrong
   * password, a database Redis does not have), and BrokerFullError when
   * Redis is full (maxmemory): nothing was enqueued, retry once it has room.
   */
  enqueue<N extends TaskName<R>>(
    name: N,
    ...rest: ArgsThenOptions<TaskArgs<R, N>, EnqueueOptions>
  ): Promise<JobHandle<TaskResult<R, N>>>;
  /** Enqueues a signature (`task(...)`): one job, as `enqueue(name, args, options)`. */
  enqueue(signature: Signature): Promise<JobHandle>;
  /**
   * Enqueues a workflow (`chain`, `group`, `chord`, nested as you like), all
   * or nothing, in one round trip: OptionError names a bad step before
   * anything is enqueued. One handle waits for the whole tree.
   */
  enqueue(workflow: Chain | Group | Chord): Promise<WorkflowHandle>;
  enqueue(first: unknown, ...rest: unknown[]): Promise<JobHandle | WorkflowHandle> {
    if (first instanceof Signature)
      return this.enqueueItems([{ name: first.name, args: [...first.args], options: jobOptionsOf(first) }]).then(
        (handles) => handles[0] as JobHandle,
      );
    if (isWorkflowPart(first)) return this.enqueueWorkflow(first);
    const [args, options] = rest as [unknown[] | undefined, EnqueueOptions | undefined];
    return this.enqueueItems([{ name: first as string, args: args ?? [], options: options ?? {} }]).then(
      (handles) => handles[0] as JobHandle,
    );
  }

  private async enqueueWorkflow(part: WorkflowPart): Promise<WorkflowHandle> {
    if (this.closed) throw new ClientClosedError();
    const workflow = this.compile(part, '');
    workflow.replyTo = this.id;
    await this.connect();
    await this.broker.enqueue([], [workflow]);
    return new WorkflowHandle(workflow.id, this.untyped);
  }

  /**
   * A workflow's nodes and jobs, every step's options checked. `rootReply`:
   * the client the root job announces its result to (a lone job with
   * callbacks); the other jobs announce nothing (the workflow does).
   */
  private compile(part: WorkflowPart, rootReply: string): CompiledWorkflow {
    const workflow = compileWorkflow(part, randomUUID(), (sig, where, id) => {
      for (const key of ['id', 'unique'] as const)
        if (sig.options[key] !== undefined)
          throw new OptionError(key, sig.options[key], 'nothing: not supported in a workflow or with callbacks', where);
      let job: NewJob;
      try {
        // The id its node is given (it names the workflow: a step not started yet is revoked by it).
        job = this.build(sig.name, [...sig.args], { ...stepOptions(sig), id });
      } catch (err) {
        if (err instanceof OptionError) throw new OptionError(err.option, err.value, err.expected, where);
        throw err;
      }
      // Not the user's own id: no ended mark, no duplicate check (the workflow's record has those).
      delete job.ownId;
      delete job.replyTo;
      return job;
    });
    const root = workflow.nodes[0]?.job;
    if (root !== undefined && rootReply !== '' && root.options.ignoreResult !== true) root.replyTo = rootReply;
    if (this.resultTtl !== undefined) workflow.ttlMs = this.resultTtl;
    return workflow;
  }

  /**
   * Many jobs in one go (pipelined): the bulk path. Every job is checked
   * before any is enqueued; rejects as enqueue() does, an OptionError naming
   * the item at fault (`enqueueMany() items[3]: invalid option ...`, an
   * unknown key of an item included). The pipeline is not
   * a transaction: should Redis refuse part of it after some jobs landed
   * (it filled up, a value over a proto-max-bulk-len lowered since it connected), or stop answering
   * (`commandTimeout`), it rejects with EnqueueIncompleteError, whose
   * `enqueued`, `notEnqueued` and `unconfirmed` name them, and whose
   * `byItem` says which of `items` each was (to enqueue again those not
   * enqueued, whose ids were made here).
   */
  async enqueueMany(items: readonly EnqueueItem<R>[]): Promise<JobHandle[]> {
    if (!Array.isArray(items)) bad('items', items, 'an array of { name, args?, options? }');
    items.forEach(checkItem);
    return this.enqueueItems(items as readonly Item[], true);
  }

  /** enqueue() and enqueueMany(); `named`: an OptionError names the item (`items[3]`) it is about. */
  private async enqueueItems(items: readonly Item[], named = false): Promise<JobHandle[]> {
    if (this.closed) throw new ClientClosedError();
    if (items.some((item) => item.options?.onSuccess !== undefined || item.options?.onError !== undefined))
      return this.enqueueWithCallbacks(items, named);
    const jobs = items.map((item, at) =>
      ofItem(at, named, () => this.build(item.name, item.args ?? [], item.options ?? {})),
    );
    await this.connect();
    const existing = await this.broker.enqueue(jobs).catch(byItem(() => jobs.map((job) => job.id)));
    return jobs.map((job, i) => this.handleOf(job, existing[i]));
  }

  /**
   * Jobs some of which have onSuccess / onError: each of those is a workflow
   * of one job (and its callbacks). One round trip for the batch: the plain
   * jobs, then the workflows.
   */
  private async enqueueWithCallbacks(items: readonly Item[], named: boolean): Promise<JobHandle[]> {
    const plan = items.map((item, at) =>
      ofItem(at, named, () => {
        const options = item.options ?? {};
        if (options.onSuccess === undefined && options.onError === undefined)
          return { job: this.build(item.name, item.args ?? [], options) };
        const sig = new Signature(item.name, item.args ?? [], options);
        const workflow = this.compile(sig, this.id);
        return { workflow, job: workflow.nodes[0]?.job as NewJob };
      }),
    );
    await this.connect();
    const plain = plan.filter((p) => p.workflow === undefined).map((p) => p.job);
    const workflows = plan.flatMap((p) => (p.workflow === undefined ? [] : [p.workflow]));
    const existing = await this.broker
      .enqueue(plain, workflows)
      .catch(byItem(() => plan.map((p) => p.workflow?.id ?? p.job.id)));
    let at = 0;
    // A job with callbacks has neither id nor unique (build refuses them): it duplicates nothing.
    return plan.map((p) => this.handleOf(p.job, p.workflow === undefined ? existing[at++] : undefined));
  }

  /** The handle of a job just enqueued, or of the job it duplicates (`of`: that job's id). */
  private handleOf(job: NewJob, of: string | undefined): JobHandle {
    // A duplicate's result is announced to whoever enqueued that job: this handle reads it.
    if (of !== undefined) return new JobHandle(of, this.untyped, false, false, true);
    // An id enqueued again after its result expired will be announced again: that one is no duplicate.
    this.delivered.delete(job.id);
    const handle = new JobHandle(job.id, this.untyped, job.options.ignoreResult === true, true);
    this.tickets.set(handle, { at: Date.now(), evictions: this.evictions });
    return handle;
  }

  /** A workflow's state and tree (see `WorkflowHandle.state()`). */
  async getWorkflowState(id: string): Promise<WorkflowView | undefined> {
    await this.connect();
    return readWorkflowView(this.broker, id);
  }

  /**
   * Resolves with a workflow's final record, as waitForResult does for a job.
   * @internal
   */
  async waitForWorkflow(id: string, timeout: number | string | undefined): Promise<ResultRecord> {
    // Counted: one of two waits on a workflow that ends (a timeout) leaves it re-read for the other.
    this.flows.set(id, (this.flows.get(id) ?? 0) + 1);
    try {
      return await this.waitForResult(id, timeout, true);
    } finally {
      const left = (this.flows.get(id) ?? 1) - 1;
      if (left > 0) this.flows.set(id, left);
      else this.flows.delete(id);
    }
  }

  /**
   * Results announced before anyone waited for them, kept (up to a bound) for
   * the waiter to come. For tests: the memory this holds shows nowhere else.
   * @internal
   */
  get parkedResults(): number {
    return this.arrived.size;
  }

  /** A handle for a job enqueued elsewhere (its result is not announced to this client, so waiting re-reads it). */
  handle<T = unknown>(id: string): JobHandle<T> {
    checkJobId('id', id, bad);
    return new JobHandle<T>(id, this.untyped, false, false);
  }

  /**
   * This client, typed by a task module: `client.typed<typeof tasks>()`
   * (as `new Client<typeof tasks>()`). Types only: nothing is checked at run time.
   */
  typed<T extends TaskRegistry>(): Client<T> {
    return this as unknown as Client<T>;
  }

  /** The same client as its handles see it: their waits take any id. */
  private get untyped(): Client {
    return this;
  }

  /**
   * Revokes a job: if it has not started it never runs (taken out of its
   * queue, or skipped by the node that fetches it), its state becomes
   * REVOKED at once and `result()` rejects with RevokedError. With
   * `terminate`, a running job is stopped too (see RevokeJobOptions); without
   * it, a running job runs on. Every node hears of it at once, and it is
   * remembered (the broker's `revokeTtl`) for nodes that start later.
   * Resolves with what was found: `revoked`, `finished` (it had already
   * ended: nothing changed) or `unknown` (no such job). A workflow's id
   * revokes the workflow (see `WorkflowHandle.revoke`).
   */
  async revoke(id: string, options: RevokeJobOptions = {}): Promise<RevokeOutcome> {
    const [outcome] = await this.revokeMany([id], options);
    return outcome as RevokeOutcome;
  }

  /** Revokes many jobs in one go (see `revoke`); one outcome per distinct id, in order. */
  async revokeMany(ids: readonly string[], options: RevokeJobOptions = {}): Promise<RevokeOutcome[]> {
    if (this.closed) throw new ClientClosedError();
    if (!Array.isArray(ids)) bad('ids', ids, 'an array of job ids');
    for (const id of ids) checkJobId('id', id, bad);
    if (typeof options !== 'object' || options === null) bad('options', options, 'an object');
    checkKnownKeys(options, REVOKE_KEYS, 'revoke() option', bad);
    if (options.terminate !== undefined && typeof options.terminate !== 'boolean')
      bad('terminate', options.terminate, 'true or false');
    const grace =
      options.grace === undefined ? DEFAULT_REVOKE_GRACE_MS : checkDuration('grace', options.grace, 'wait', bad);
    await this.connect();
    return this.broker.revoke(ids, { terminate: options.terminate === true, grace: Math.round(grace) });
  }

  /** The job's stored state and outcome, or undefined when the broker has none (unknown id, or expired). */
  getResult(id: string): Promise<ResultRecord | undefined> {
    return this.connect().then(() => this.broker.getResult(id));
  }

  /** The job's current state, wherever it is (see `JobHandle.state()`). */
  async getState(id: string): Promise<ResultRecord | undefined> {
    await this.connect();
    // Where first, then the record: a job that ends between the two reads shows its end.
    const location = await this.broker.locate(id);
    return jobStatus(location, await this.broker.getResult(id));
  }

  /**
   * Resolves with the job's final record (SUCCESS or FAILURE). Jobs this
   * client enqueued are announced to it; for other ids the state is re-read
   * with a growing pause (0.1 s to 2 s). Rejects with ResultTimeoutError past
   * `timeout` (ms or "30s"; none by default), ResultGoneError when the result
   * expired (or, `announced`, the job is nowhere), ClientClosedError on close().
   */
  waitForResult(id: string, timeout?: number | string, announced = false): Promise<ResultRecord> {
    return this.waitFor(id, timeout, announced, undefined, announced);
  }

  /**
   * `JobHandle.result()`: as waitForResult, with the handle's ticket on its
   * first wait (the announcement goes to one waiter; a later wait reads the stored result).
   * A duplicate's job existed when it was enqueued: found nowhere, its wait fails as an own job's does.
   * @internal
   */
  waitForHandle(handle: JobHandle, timeout: number | string | undefined, announced: boolean): Promise<ResultRecord> {
    const ticket = this.tickets.get(handle);
    if (ticket !== undefined) this.tickets.delete(handle);
    return this.waitFor(handle.id, timeout, announced, ticket, announced || handle.duplicate);
  }

  /** `existed`: the job is known to have been enqueued (not an id that may yet be), so nowhere is gone. */
  private async waitFor(
    id: string,
    timeout: number | string | undefined,
    announced: boolean,
    ticket: EnqueueTicket | undefined,
    existed: boolean,
  ): Promise<ResultRecord> {
    const ms = timeout === undefined ? undefined : checkDuration('timeout', timeout, 'wait', bad);
    const started = performance.now();
    if (!this.closed) await this.connectForWait(id, ms);
    // Closed before or meanwhile: a waiter registered now would never be settled.
    if (this.closed) throw closedWhileWaiting(id);
    const early = this.arrived.get(id);
    // A job's failure read before this wait may have been taken back since (dead retry): checked first, below.
    const parked = early !== undefined && takenBackMaybe(early) && !this.flows.has(id) ? early : undefined;
    if (early !== undefined) {
      this.arrived.delete(id);
      if (parked === undefined) {
        this.remember(id);
        if (early === GONE) throw new ResultGoneError(id);
        return early;
      }
    }
    return new Promise<ResultRecord>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, timer: undefined };
      if (ms !== undefined) {
        // Counted from the call: the connect above took part of it.
        waiter.timer = setTimeout(
          () => {
            this.removeWaiter(id, waiter);
            reject(new ResultTimeoutError(id, ms));
          },
          Math.max(0, ms - (performance.now() - started)),
        );
      }
      const list = this.waiters.get(id);
      if (list) list.push(waiter);
      else this.waiters.set(id, [waiter]);
      if (existed) this.own.add(id);
      this.listen();
      if (parked !== undefined) {
        this.confirm(id, parked, announced ? undefined : waiter);
        return;
      }
      const now = Date.now();
      if (ticket !== undefined && ticket.evictions === this.evictions && now - ticket.at < SKIP_FIRST_LOOK_MS) {
        this.unlooked.set(id, now);
        return;
      }
      // The result may already be stored (done before we started waiting, or enqueued elsewhere).
      this.looks.read(id).then(
        (record) => {
          if (record !== undefined && isFinalState(record.state)) this.deliver(record);
          // A workflow's record lives from its enqueue until its TTL after its end: none, it is gone.
          else if (record === undefined && this.flows.has(id)) this.settleGone(id);
          else if (!announced) {
            if (record === undefined && existed) this.lookWhere(id);
            this.pollForeign(id, waiter);
          } else if (record === undefined) this.lookWhere(id);
        },
        (err: unknown) => {
          // Refused for good (a damaged value at its key): waiting on would end only at the timeout.
          if (err instanceof BrokerRefusedError) return this.refuseWaits(id, err);
          this.log.warn({ err, jobId: id }, 'could not read a result');
          // A transient error: an id enqueued elsewhere is only found by reading it, so keep reading;
          // an announced one may have been announced already (and the announcement dropped).
          if (!announced) this.pollForeign(id, waiter);
          else this.rereadPending = true;
        },
      );
    });
  }

  /**
   * Hands the waiters of `id` a failure (or gone) only once the store still
   * says so: `dead retry` drops a retried job's stored failure and queues it
   * again, and its waits then wait for the new run's announcement. Checked:
   * a failure parked before its wait began, one read from a backlog (a
   * retry takes no announcement out of a list that long), an id read gone.
   * The look is one of the batched first looks (no round trip of its own);
   * with no stored result, where the job is decides: nowhere, its result
   * expired and `outcome` stands. `foreign`: a wait not announced here,
   * which polls while the job runs again.
   */
  private confirm(id: string, outcome: ResultRecord | typeof GONE, foreign?: Waiter): void {
    const handOver = (): void => (outcome === GONE ? this.settleGone(id) : this.deliver(outcome));
    this.looks
      .read(id)
      .then(async (record) => {
        if (record !== undefined && isFinalState(record.state)) this.deliver(record);
        else if (record === undefined && (await this.isNowhere(id))) handOver();
        // Queued or running again: announced here when it ends (it keeps its reply list), or polled.
        else if (foreign !== undefined) this.pollForeign(id, foreign);
      })
      .catch((err: unknown) => {
        // What was read stands, as it did before the look.
        if (!this.closed) this.log.warn({ err, jobId: id }, 'could not check a failed result; handing it over');
        handOver();
      });
  }

  /**
   * The events of every node on the broker (jobs received, started,
   * succeeded, failed, retried, lost; children up and down; scaling; nodes
   * online, offline, fenced), oldest first: the last `recent` ones, then each
   * as it comes, until `signal` aborts or the client closes (as BullMQ's
   * QueueEvents). `task`, `node` and `types` filter them. Rejects with
   * OptionError for a bad option, ClientClosedError after close().
   */
  async *events(options: EventsOptions = {}): AsyncGenerator<NodeEvent> {
    if (this.closed) throw new ClientClosedError();
    checkEventsOptions(options);
    await this.connect();
    yield* followEvents(this.broker, options, this.closing.signal, this.log);
  }

  /**
   * Rejects every pending wait with ClientClosedError and closes the broker
   * if the client opened it. Enqueuing afterwards rejects with ClientClosedError.
   * Called again (before or after it ended), it resolves when the first call does.
   */
  close(): Promise<void> {
    // One close for all callers: a second call that resolved at once would let its caller exit with sockets open.
    this.closeCall ??= this.shutdown();
    return this.closeCall;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    this.failEveryWait(closedWhileWaiting);
    if (this.ownsBroker) await this.broker.close();
    await this.listening?.catch(() => undefined);
  }

  /**
   * A wait's connect: bounded by the wait's timeout (ResultTimeoutError),
   * not only by the connect's own bound (10 s), which a Redis that accepts
   * and never answers would make the wait sit out. One that close() cut
   * short fails as the wait it held up: closed, not a broker error.
   */
  private async connectForWait(id: string, ms: number | undefined): Promise<void> {
    const connecting = this.connect().catch((err: unknown) =>
      Promise.reject(this.closed ? closedWhileWaiting(id) : err),
    );
    if (ms === undefined) return connecting;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ResultTimeoutError(id, ms)), ms);
    });
    try {
      await Promise.race([connecting, late]);
    } finally {
      clearTimeout(timer);
      // Given up on: the connect goes on for the client's next call, and its failure is not this wait's.
      connecting.catch(() => undefined);
    }
  }

  /** Rejects every pending wait with the error `errorFor` gives for its job id. */
  private failEveryWait(errorFor: (id: string) => Error): void {
    this.unlooked.clear();
    this.nowhere.clear();
    this.own.clear();
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const [id, list] of waiters) {
      for (const w of list) {
        clearTimeout(w.timer);
        w.reject(errorFor(id));
      }
    }
  }

  /** Connects once; a failed connect is not kept, so the next call tries again. */
  private connect(): Promise<void> {
    this.connected ??= this.broker.connect().catch((err: unknown) => {
      this.connected = undefined;
      throw err;
    });
    return this.connected;
  }

  private build(name: string, args: readonly unknown[], options: EnqueueOptions): NewJob {
    if (typeof name !== 'string' || name.length === 0) throw new OptionError('name', name, 'a task name');
    if (!Array.isArray(args)) throw new OptionError('args', args, 'an array of arguments');
    // A number or a string here (a priority, a queue) would otherwise be enqueued with no option at all.
    const given: unknown = options;
    if (!isRecord(given)) bad('options', options, 'an object of enqueue options');
    checkKnownKeys(options, ENQUEUE_KEYS, 'enqueue option', bad);
    const { options: jobOptions } = checkJobOptionFields(options, bad);
    // The client's resultTtl stands in for a job's own; a job that keeps no result keeps no ttl.
    if (jobOptions.ignoreResult === true) delete jobOptions.resultTtl;
    else if (jobOptions.resultTtl === undefined && this.resultTtl !== undefined) jobOptions.resultTtl = this.resultTtl;
    if (options.id !== undefined) checkJobId('id', options.id, bad);
    const delay = options.delay === undefined ? undefined : checkDelay('delay', options.delay, bad);
    const eta = options.eta === undefined ? undefined : checkEta('eta', options.eta, bad);
    // Both would leave one silently ignored: say which to give, as the CLI does.
    if (delay !== undefined && eta !== undefined) bad('eta', options.eta, 'no eta when a delay is given: one of them');
    let payload: Uint8Array;
    try {
      payload = encodeBody(args as unknown[]);
    } catch (err) {
      throw new ArgumentSerializationError(name, err);
    }
    const id = options.id ?? randomUUID();
    const queue = options.queue ?? 'default';
    // The exact bound only near the limit (a string takes at most 3 bytes per UTF-16 unit).
    if (payload.length + FRAME_FIELDS_MAX + 3 * (name.length + id.length + queue.length) > this.maxFrameSize) {
      const bytes = jobFrameSize(name, id, queue, payload.length);
      if (bytes > this.maxFrameSize) throw new ArgumentsTooLargeError(name, bytes, this.maxFrameSize);
    }
    const job: NewJob = {
      id,
      task: name,
      queue,
      payload,
      attempt: 0,
      redeliveries: 0,
      options: jobOptions,
      enqueuedAt: Date.now(),
    };
    if (!jobOptions.ignoreResult) job.replyTo = this.id;
    if (delay !== undefined) job.delay = delay;
    if (eta !== undefined) job.eta = eta;
    if (options.id !== undefined) job.ownId = true;
    if (options.unique !== undefined && options.unique !== false) {
      const unique = checkUnique(options.unique);
      job.uniqueKey = unique.key ?? `a:${name}:${createHash('sha256').update(payload).digest('base64url')}`;
      if (unique.ttl !== undefined) job.uniqueTtl = unique.ttl;
    }
    return job;
  }

  /** One blocking read at a time on this client's reply list, while anyone waits. */
  private listen(): void {
    if (this.listening !== undefined || this.closed) return;
    this.listening = (async () => {
      let failures = 0;
      let afterBacklog = false;
      while (this.waiters.size > 0 && !this.closed) {
        try {
          if (this.rereadPending) {
            this.rereadPending = false;
            await this.reread();
          }
          const got = await this.broker.waitForResults(this.id, WAIT_SLICE_MS, this.closing.signal);
          // A backlog may hold announcements a dead retry left (it scans no list that long): so may the read after.
          const suspect = got.backlog === true || afterBacklog;
          afterBacklog = got.backlog === true;
          for (const record of got.records) {
            if (suspect && record.state === 'FAILURE' && this.waiters.has(record.id)) this.confirm(record.id, record);
            else this.deliver(record);
          }
          // Expired, or dropped by a dead retry between the pop and the read, or with a backlog.
          for (const id of got.gone) {
            if (this.waiters.has(id)) this.confirm(id, GONE);
            else this.settleGone(id);
          }
          if (got.missed) this.rereadPending = true;
          if (got.reconnected === true) this.findPending = true;
          if (this.unlooked.size > 0) this.lookAtUnlooked();
          if (this.nowhere.size > 0) await this.lookAgainNowhere();
          if (this.flows.size > 0 && Date.now() - this.flowsReadAt >= WAIT_SLICE_MS) await this.rereadFlows();
          failures = 0;
        } catch (err) {
          if (this.closed) break;
          // A broker object its owner closed: nothing will ever settle a wait, and retrying would keep the process alive.
          if (err instanceof BrokerClosedError) {
            this.log.warn({ err }, 'the broker was closed while results were waited for; failing the waits');
            this.failEveryWait(() => err);
            break;
          }
          // The ids a failed read took from the reply list are lost with it.
          this.rereadPending = true;
          this.findPending = true;
          this.log.warn({ err }, 'waiting for results failed; retrying');
          await abortableSleep(retryDelay(failures++, LISTEN_RETRY), this.closing.signal);
        }
      }
    })().finally(() => {
      this.listening = undefined;
      if (this.waiters.size > 0 && !this.closed) this.listen();
    });
  }

  /**
   * Hands a final record to the job's waiters, or keeps it for a waiter to
   * come. A record for an id already handed over is a second announcement of
   * it (a redelivered job that ran twice, or a waiter that found the stored
   * result before the announcement came): dropped, or it would be kept
   * until pushed out by newer ones.
   */
  private deliver(record: ResultRecord): void {
    const list = this.take(record.id, record);
    for (const w of list ?? []) {
      clearTimeout(w.timer);
      w.resolve(record);
    }
  }

  /**
   * An announced id whose result is no longer stored (or, `nowhere`, a job
   * found nowhere): its waiters (and one to come) fail, naming it.
   */
  private settleGone(id: string, nowhere = false): void {
    const list = this.take(id, GONE);
    if (list === undefined) return;
    const err = new ResultGoneError(id, nowhere);
    for (const w of list) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }

  /** The waiters of `id`, now handed their outcome; without any, the outcome is kept for one to come. */
  private take(id: string, outcome: ResultRecord | typeof GONE): Waiter[] | undefined {
    const list = this.waiters.get(id);
    if (list === undefined) {
      if (this.delivered.has(id)) return undefined;
      this.arrived.delete(id);
      if (this.arrived.size >= ARRIVED_MAX) {
        this.arrived.delete(this.arrived.keys().next().value as string);
        this.evictions++;
      }
      this.arrived.set(id, outcome);
      return undefined;
    }
    this.waiters.delete(id);
    this.unlooked.delete(id);
    this.nowhere.delete(id);
    this.own.delete(id);
    this.remember(id);
    return list;
  }

  /**
   * Reads the stored result of every job waited for: announcements may have
   * been lost. After a failed or replaced connection (`findPending`), asks
   * where this client's jobs without a result are, too.
   */
  private async reread(): Promise<void> {
    const ids = [...this.waiters.keys()];
    const records = await this.readForWaits(ids);
    const find = this.findPending;
    this.findPending = false;
    records.forEach((record, i) => {
      const id = ids[i] as string;
      if (record === REFUSED) return;
      if (record === undefined) {
        if (find && this.own.has(id)) this.lookWhere(id);
      } else if (isFinalState(record.state)) this.deliver(record);
    });
  }

  /**
   * Reads the stored results of waits that skipped their first look a slice
   * ago and heard nothing since; beside the blocking read, not before it (a
   * read that fails makes every wait re-read).
   */
  private lookAtUnlooked(): void {
    const before = Date.now() - WAIT_SLICE_MS;
    const ids: string[] = [];
    // Insertion order is age order: stop at the first young one.
    for (const [id, since] of this.unlooked) {
      if (since > before) break;
      ids.push(id);
    }
    if (ids.length === 0) return;
    for (const id of ids) this.unlooked.delete(id);
    this.readForWaits(ids).then(
      (records) => {
        records.forEach((record, i) => {
          if (record === REFUSED) return;
          if (record === undefined) this.lookWhere(ids[i] as string);
          else if (isFinalState(record.state)) this.deliver(record);
        });
      },
      (err: unknown) => {
        if (this.closed) return;
        this.log.warn({ err }, 'could not read results waited for');
        this.rereadPending = true;
      },
    );
  }

  /**
   * Where a job of this client with no stored result is: nowhere (no queue
   * or node holds it, and still no result: it may have ended meanwhile)
   * marks it for a second look a slice later (`nowhere`). A job that waits
   * or runs is announced when it ends, as before.
   */
  private lookWhere(id: string): void {
    this.isNowhere(id).then(
      (lost) => {
        if (lost && this.waiters.has(id) && !this.nowhere.has(id)) this.nowhere.set(id, Date.now());
      },
      (err: unknown) => {
        if (!this.closed) this.log.warn({ err, jobId: id }, 'could not find a job waited for');
      },
    );
  }

  /** True when the broker finds the job in no queue, held by no node, and has no record of it. */
  private async isNowhere(id: string): Promise<boolean> {
    // Where first, then the record: a job that ends between the two reads shows its end.
    if ((await this.broker.locate(id)) !== undefined) return false;
    return (await this.broker.getResult(id)) === undefined;
  }

  /**
   * Waits whose job was nowhere a slice ago: still nowhere, they fail
   * (ResultGoneError); else they wait on. Not while the broker is full: a
   * node then holds the outcomes of jobs it acked (in no queue, no result
   * yet), so they are looked at again two slices later: once there is room,
   * the node writes them within its retry pause (at most 5 s).
   */
  private async lookAgainNowhere(): Promise<void> {
    const before = Date.now() - WAIT_SLICE_MS;
    const due: string[] = [];
    // Insertion order is nearly age order (a re-marked id goes last, a slice ahead): stop at the first young one.
    for (const [id, since] of this.nowhere) {
      if (since > before) break;
      due.push(id);
    }
    if (due.length === 0) return;
    if (await this.broker.isFull()) {
      for (const id of due) this.nowhere.delete(id);
      for (const id of due) this.nowhere.set(id, Date.now() + WAIT_SLICE_MS);
      return;
    }
    // Some looks at a time, not one after another: after Redis lost its data, 10,000 waits took 27 s here,
    // holding up the reads of the reply list (and every live result) meanwhile.
    for (let i = 0; i < due.length; i += LOOKS_AT_ONCE) {
      const chunk = due.slice(i, i + LOOKS_AT_ONCE);
      // Unmarked only once looked at: a look that fails (thrown to the loop) is tried again.
      const lost = await Promise.all(chunk.map(async (id) => this.waiters.has(id) && (await this.isNowhere(id))));
      chunk.forEach((id, at) => {
        this.nowhere.delete(id);
        if (lost[at] === true) this.settleGone(id, true);
      });
    }
  }

  /** Reads the outcome of every workflow waited for (see `flows`). */
  private async rereadFlows(): Promise<void> {
    this.flowsReadAt = Date.now();
    const ids = [...this.flows.keys()].filter((id) => this.waiters.has(id));
    if (ids.length === 0) return;
    const records = await this.readForWaits(ids);
    records.forEach((record, i) => {
      if (record === REFUSED) return;
      if (record === undefined) this.settleGone(ids[i] as string);
      else if (isFinalState(record.state)) this.deliver(record);
    });
  }

  private remember(id: string): void {
    this.delivered.delete(id);
    if (this.delivered.size >= DELIVERED_MAX) this.delivered.delete(this.delivered.values().next().value as string);
    this.delivered.add(id);
  }

  /** Ids enqueued elsewhere are never announced here: re-read their state with a growing pause. */
  private pollForeign(id: string, waiter: Waiter, polls = 0): void {
    const pause = retryDelay(polls, FOREIGN_POLL);
    setTimeout(() => {
      if (!this.waiters.get(id)?.includes(waiter) || this.closed) return;
      this.looks.read(id).then(
        (record) => {
          if (record !== undefined && isFinalState(record.state)) {
            this.deliver(record);
            return;
          }
          // A duplicate's job (own): it may have ended keeping no result (ignoreResult), and would be polled for ever.
          if (record === undefined && this.own.has(id) && !this.nowhere.has(id)) this.lookWhere(id);
          this.pollForeign(id, waiter, polls + 1);
        },
        (err: unknown) => {
          if (err instanceof BrokerRefusedError) this.refuseWaits(id, err);
          else this.pollForeign(id, waiter, polls + 1);
        },
      );
    }, pause).unref();
  }

  /**
   * The stored results of `ids` for waits that re-read them, through `looks`
   * (a call that fails is split down to the id whose read fails): the waits
   * of an id whose result the broker refuses fail with that refusal, and the
   * others' reads go on. Any other failure, which a read again may not meet,
   * is thrown for the caller to read again.
   */
  private async readForWaits(ids: readonly string[]): Promise<(ResultRecord | undefined | typeof REFUSED)[]> {
    const reads = await Promise.allSettled(ids.map((id) => this.looks.read(id)));
    const out: (ResultRecord | undefined | typeof REFUSED)[] = [];
    for (const [i, read] of reads.entries()) {
      if (read.status === 'fulfilled') out.push(read.value);
      else if (read.reason instanceof BrokerRefusedError) {
        this.refuseWaits(ids[i] as string, read.reason);
        out.push(REFUSED);
      } else throw read.reason;
    }
    return out;
  }

  /** Fails the waits of `id` with the broker's refusal to read its stored result (it names the key). */
  private refuseWaits(id: string, err: BrokerRefusedError): void {
    const list = this.waiters.get(id);
    if (list === undefined) return;
    this.log.warn({ err, jobId: id }, `could not read the result of job ${id}: its waits fail`);
    this.waiters.delete(id);
    this.unlooked.delete(id);
    this.nowhere.delete(id);
    this.own.delete(id);
    for (const w of list) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }

  private removeWaiter(id: string, waiter: Waiter): void {
    const list = this.waiters.get(id)?.filter((w) => w !== waiter);
    if (list === undefined || list.length === 0) {
      this.waiters.delete(id);
      this.unlooked.delete(id);
      this.nowhere.delete(id);
      this.own.delete(id);
    } else this.waiters.set(id, list);
  }
}
