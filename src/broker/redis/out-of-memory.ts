import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { BrokerFullError, messageOf } from '../../errors.js';

/** Redis's refusal of a write at maxmemory under the noeviction policy ("OOM command not allowed ..."). */
export function isOutOfMemory(err: unknown): boolean {
  return err instanceof Error && err.name === 'ReplyError' && err.message.startsWith('OOM');
}

const ADVICE =
  'raise maxmemory (CONFIG SET maxmemory), drain or purge queues, or shorten resultTtl; see "Sizing Redis" in docs/failure-modes.md';

/** What Redis refused, and what became of it. */
const REFUSED = {
  outcomes:
    'to store job outcomes (results, retries, dead letters). Nothing is lost: this node keeps them and writes them once Redis has room',
  jobs: 'to enqueue jobs. The enqueue failed: retry it once Redis has room',
  revokes:
    'to record a revoke. Jobs that waited in their queues were taken out with their REVOKED results (that frees memory); jobs held by a node or not started yet may still run: revoke them again once Redis has room',
} as const;

/** What the caller of a refused call is told (a node's outcomes are kept and written later: it is told nothing). */
const TOLD: Partial<Record<Writes, string>> = {
  jobs: 'refused to enqueue: nothing was enqueued; retry once it has room',
  revokes:
    'refused to record the revoke: jobs that waited in their queues are revoked, but jobs held by a node or not started yet may still run; revoke again once it has room',
};

export type Writes = keyof typeof REFUSED;

/**
 * Writes Redis refuses for want of memory: one warning per episode and kind
 * of write, saying what happened and what to do (retries would otherwise
 * log the same bare "OOM" reply again and again); an info line when such a
 * write lands again.
 */
export class OutOfMemoryNotice {
  private readonly refusing = new Set<Writes>();

  constructor(
    private readonly log: Logger,
    private readonly displayUrl: string,
  ) {}

  /** Runs `call`; `writes` says whether it carried writes of that kind (only those end an episode). */
  async watch<T>(what: Writes, writes: boolean, call: () => Promise<T>): Promise<T> {
    try {
      const value = await call();
      if (writes && this.refusing.delete(what))
        this.log.info({ broker: this.displayUrl }, `Redis has room again: ${what} are written`);
      return value;
    } catch (err) {
      if (!isOutOfMemory(err)) throw err;
      if (!this.refusing.has(what)) {
        this.refusing.add(what);
        this.log.warn(
          { err, broker: this.displayUrl },
          `Redis at ${this.displayUrl} is out of memory (it reached maxmemory and, under the noeviction policy prefork needs, refuses writes instead of deleting data) and refused ${REFUSED[what]}. To make room: ${ADVICE}`,
        );
      }
      // An enqueue's or a revoke's caller gets a named error saying what to do, not Redis's bare OOM reply.
      const told = TOLD[what];
      if (told !== undefined)
        throw new BrokerFullError(
          this.displayUrl,
          `Redis at ${this.displayUrl} is out of memory (maxmemory reached) and ${told} (${ADVICE})`,
          { cause: err },
        );
      throw err;
    }
  }
}

/**
 * Redis near its maxmemory, from `INFO memory`: within a tenth of it. Redis
 * refuses growing writes above it; an ack that freed a little takes it just
 * below, while a node still holds outcomes it will write on its next try.
 */
export function nearMaxmemory(info: string): boolean {
  const max = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? 0);
  const used = Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? 0);
  return max > 0 && used >= max * 0.9;
}

/**
 * Warns when Redis may evict keys (any maxmemory-policy but noeviction): at
 * maxmemory it would delete results (their result() calls then time out),
 * reply lists and node descriptions, and with allkeys-* queued jobs too, all
 * without a word. Best effort: a Redis that does not answer INFO is skipped.
 */
export async function checkEvictionPolicy(redis: Redis, log: Logger, displayUrl: string): Promise<void> {
  let info: string;
  try {
    info = await redis.info('memory');
  } catch (err) {
    log.debug({ err: messageOf(err) }, 'could not read the eviction policy (INFO memory)');
    return;
  }
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy === undefined || policy === 'noeviction') return;
  const lost = policy.startsWith('allkeys')
    ? 'queued and delayed jobs, node leases, results'
    : 'results (their result() calls time out), reply lists, node descriptions';
  log.warn(
    { broker: displayUrl, maxmemoryPolicy: policy },
    `Redis at ${displayUrl} has maxmemory-policy ${policy}: once full it silently deletes keys prefork needs (${lost}). Set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, or in redis.conf) and size maxmemory for your backlog; see "Sizing Redis" in docs/failure-modes.md`,
  );
}
