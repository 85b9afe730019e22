import type { PoolJobInfo } from '../pool/job-list.js';
import { encodeBody } from '../protocol/codec.js';
import { ARGS_KEPT_MAX } from '../protocol/job-args.js';

/** A job as a node reports it to `prefork inspect active|reserved` (a control reply: JSON). */
export interface JobView {
  /** The job's id. */
  id: string;
  /** The task's name. */
  task: string;
  /** The queue it was fetched from. */
  queue?: string;
  /** Retries spent before this attempt. */
  retries: number;
  /** The child running it (active), or whose pipe holds it (reserved); none while in the outbound buffer. */
  pid?: number;
  /** Epoch ms it started (active). */
  startedAt?: number;
  /** Base64 of the msgpack argument array, when it is at most ARGS_KEPT_MAX bytes; the asker decodes it. */
  payload?: string;
  /** The payload's size in bytes. */
  payloadBytes: number;
}

/** The node never decodes a job's payload: it passes the bytes on (bounded) for the asker to show. */
export function jobView(job: PoolJobInfo): JobView {
  const bytes = payloadOf(job.args);
  const view: JobView = { id: job.id, task: job.name, retries: job.retries, payloadBytes: bytes.byteLength };
  if (job.queue !== undefined) view.queue = job.queue;
  if (job.pid !== undefined) view.pid = job.pid;
  if (job.startedAt !== undefined) view.startedAt = job.startedAt;
  if (bytes.byteLength <= ARGS_KEPT_MAX)
    view.payload = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  return view;
}

/** A pool job's payload: the bytes it was applied with, or an array encoded (empty when it cannot be: the job fails with that when sent). */
function payloadOf(args: PoolJobInfo['args']): Uint8Array {
  if (args instanceof Uint8Array) return args;
  try {
    return encodeBody(args);
  } catch {
    return new Uint8Array(0);
  }
}
