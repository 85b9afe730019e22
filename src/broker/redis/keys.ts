import { throwOptionError } from '../../job-option-checks.js';
import { checkNamespace } from '../broker-options.js';

/** Consumer group every node reads through (one group: a job goes to one node). */
export const GROUP = 'w';

/**
 * Every key the broker uses. Queue, node and membership keys share the hash
 * tag `{<namespace>}` so one script can touch them all on a Redis Cluster;
 * results and reply lists are outside it (namespaced, but spread over slots).
 * Each key is `<prefix>:<kind>` or `<prefix>:<kind>:<name>`, the kind a fixed
 * word, so no name chosen by a user (a queue, a job id) can spell another
 * key: a queue named "default:delayed" (refused anyway) would be
 * `{ns}:q:default:delayed`, never the delayed set `{ns}:delayed:default`.
 * The kinds outside the tag are UNTAGGED_KEY_KINDS, which checkNamespace
 * keeps out of a namespace's parts: no namespace spells another's keys.
 */
export class Keys {
  readonly tag: string;

  constructor(readonly namespace: string) {
    checkNamespace('namespace', namespace, throwOptionError);
    this.tag = `{${namespace}}`;
  }

  stream(queue: string): string {
    return `${this.tag}:q:${queue}`;
  }
  rd(queue: string): string {
    return `${this.tag}:rd:${queue}`;
  }
  delayed(queue: string): string {
    return `${this.tag}:delayed:${queue}`;
  }
  dead(queue: string): string {
    return `${this.tag}:dead:${queue}`;
  }
  /** The four keys of a queue, in the order the fetch script expects. */
  queueKeys(queue: string): [string, string, string, string] {
    return [this.stream(queue), this.rd(queue), this.delayed(queue), this.dead(queue)];
  }

  /**
   * The keys a node's fetch and heartbeat touch for `queues`, each with the
   * Redis type it must hold (or not exist): to name the key another program
   * wrote over when Redis answers WRONGTYPE.
   */
  typedKeys(queues: readonly string[]): [key: string, type: string][] {
    const typed: [string, string][] = [
      [this.nodes, 'zset'],
      [this.recovering, 'zset'],
      [this.jobs, 'hash'],
    ];
    for (const q of queues) typed.push(...this.queueTypes(q));
    return typed;
  }

  /** The four keys of a queue, each with the Redis type it must hold (see typedKeys). */
  queueTypes(queue: string): [key: string, type: string][] {
    return [
      [this.stream(queue), 'stream'],
      [this.rd(queue), 'stream'],
      [this.delayed(queue), 'zset'],
      [this.dead(queue), 'stream'],
    ];
  }

  get nodes(): string {
    return `${this.tag}:nodes`;
  }
  node(id: string): string {
    return `${this.tag}:node:${id}`;
  }
  /** A node's control requests (a LIST; see sendControl-2.lua). */
  control(id: string): string {
    return `${this.tag}:ctl:${id}`;
  }
  /** The leader lease: holder, fencing token, deadline (a HASH; see heartbeat-n.lua). */
  get leader(): string {
    return `${this.tag}:leader`;
  }
  get recovering(): string {
    return `${this.tag}:recovering`;
  }
  get queues(): string {
    return `${this.tag}:queues`;
  }
  /** Revoked job ids (a ZSET: id -> epoch ms it was revoked; see revokeJobs-1.lua). */
  get revoked(): string {
    return `${this.tag}:revoked`;
  }
  /** The capped stream of node events (each entry: the events of one write). */
  get events(): string {
    return `${this.tag}:events`;
  }
  /** The job index: job id -> where the job is (a HASH; see lib/prelude.lua, "The job index"). */
  get jobs(): string {
    return `${this.tag}:jobs`;
  }
  /**
   * A unique-job key (a STRING): `k:<your key>` or `a:<task>:<args hash>`
   * holds the id of the job that has the key; `i:<job id>` marks a job
   * with its own id that ended, while its result is kept.
   */
  unique(name: string): string {
    return `${this.tag}:unique:${name}`;
  }
  /** The mark of a job with its own id that ended, kept while its result is (unique `i:<job id>`). */
  endedMark(jobId: string): string {
    return this.unique(`i:${jobId}`);
  }
  /** A workflow's record (a HASH; see lua/lib/workflow.lua). */
  workflow(id: string): string {
    return `${this.tag}:wf:${id}`;
  }
  /** Paused queues (a SET of `<queue>` or `<queue> <node name>`; see pauses.ts). */
  get paused(): string {
    return `${this.tag}:paused`;
  }
  /** The names of the schedule entries stored (a SET). */
  get schedules(): string {
    return `${this.tag}:schedules`;
  }
  /** One schedule entry's definition and latest tick (a HASH; see claimTicks-n.lua). */
  scheduleEntry(name: string): string {
    return `${this.tag}:sched:${name}`;
  }

  /** Rates set at run time (`prefork control rate-limit`), by task: a HASH. */
  get rateLimits(): string {
    return `${this.tag}:rate-limits`;
  }
  /** A task's rate-limit bucket: the time its next start is due (GCRA). */
  rateBucket(task: string): string {
    return `${this.tag}:rate:${task}`;
  }

  /**
   * The job ids of one settle call's settlements that the fetch script did
   * not apply (their entries no longer this node's): its storeResults call
   * in the same pipeline overwrites no result of theirs. A SET, short-lived.
   */
  unapplied(call: string): string {
    return `${this.tag}:unapplied:${call}`;
  }
  result(jobId: string): string {
    return `${this.namespace}:res:${jobId}`;
  }
  reply(clientId: string): string {
    return `${this.namespace}:reply:${clientId}`;
  }
  /** The pub/sub channel on which a posted control request's node id is announced. */
  get controlWake(): string {
    return `${this.namespace}:ctl-wake`;
  }
  /** Where nodes push their replies to one control request. */
  controlReply(requestId: string): string {
    return `${this.namespace}:ctl-reply:${requestId}`;
  }
}
