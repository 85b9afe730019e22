import { encodeBody } from './codec.js';
import { MessageType } from './messages.js';

/** Largest frame a child and its parent exchange unless told otherwise (the Pool's `maxFrameSize`). */
export const DEFAULT_MAX_FRAME_SIZE = 64 * 1024 * 1024;
/** The largest `maxFrameSize`: a frame's length travels in 4 bytes (2^32-1, 4 GiB less a byte). */
export const MAX_FRAME_SIZE = 2 ** 32 - 1;

/** Bytes a header of the arguments' bytes can add over an empty one's (msgpack bin/ext 32 at most). */
const ARGS_HEADER_GROWTH = 8;

/**
 * An upper bound of the body of the JOB frame that carries a job to a child:
 * its fields at their largest (sequence number, retries) around `argsBytes`
 * of encoded arguments. A producer compares it with `maxFrameSize` to refuse
 * a job no child could receive.
 */
export function jobFrameSize(task: string, id: string, queue: string, argsBytes: number): number {
  const meta = { id, queue, retries: Number.MAX_SAFE_INTEGER };
  const rest = encodeBody([MessageType.JOB, Number.MAX_SAFE_INTEGER, task, new Uint8Array(0), meta]).length;
  return rest + ARGS_HEADER_GROWTH + argsBytes;
}
