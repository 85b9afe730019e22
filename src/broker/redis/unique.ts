import type { ChainableCommander } from 'ioredis';
import { resultTtlOf } from '../../job-option-checks.js';
import type { Settlement } from '../types.js';
import type { Keys } from './keys.js';
import { callScript } from './scripts.js';

type Settled = readonly { kind: string; delivery: Settlement['delivery']; result?: unknown }[];

/** Jobs that end with this settlement: their unique key and own id stop holding. */
const ends = (kind: string): boolean => kind === 'ack' || kind === 'dead';

/**
 * Queued ahead of the settle script (same round trip): a job with its own id
 * that ends is marked ended for as long as its result is kept, so the same
 * id enqueued again meanwhile returns it (enqueueOnce-n.lua). Marked before
 * it leaves the job index, so no enqueue finds it in neither.
 */
export function addEndedMarks(pipe: ChainableCommander, keys: Keys, settle: Settled, resultTtl: number): void {
  for (const s of settle) {
    const { job } = s.delivery;
    if (!ends(s.kind) || job.ownId !== true || s.result === undefined || job.options.ignoreResult === true) continue;
    pipe.set(keys.endedMark(job.id), '1', 'PX', resultTtlOf(job.options, resultTtl));
  }
}

/**
 * Queued after the settle script: the unique keys of jobs that ended are
 * released (each only while its job still holds it, and only once it left
 * the job index: a settlement the script did not apply leaves the key to
 * the job's recovered copy). A key whose job left the index is free anyway
 * (enqueueOnce-n.lua): this only frees memory.
 */
export function addUniqueReleases(pipe: ChainableCommander, keys: Keys, settle: Settled): void {
  for (const s of settle) {
    const { job } = s.delivery;
    if (ends(s.kind) && job.uniqueKey !== undefined)
      callScript(pipe, 'releaseUnique', [keys.unique(job.uniqueKey), keys.jobs], [job.id]);
  }
}
