import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { childFilePath } from '../util/child-file.js';

/**
 * The start record: a small file shared by a child and its parent in which
 * the child writes, before each job runs, the job's number and start time.
 * It replaces the ACK frame of a job that starts while nothing else is on
 * its way to the parent: the write wakes nobody (the parent reads the record
 * when it needs to know), and it survives the child's death, so the parent
 * still tells the job that was running from those that never started.
 * docs/architecture.md ("The pipe protocol") says when the parent reads it.
 */

/** The fd a child finds its start record on (the parent passes it as the fourth stdio entry). */
export const START_RECORD_FD = 3;

/** Bytes of one record: [seq, startedAt, check] as float64s; the check detects a torn read. */
const RECORD_BYTES = 24;
/** A torn read can only overlap a write in progress (a few ns): re-read this many times at most. */
const READ_ATTEMPTS = 100;

/** Mixes both numbers' low 32 bits: a read that caught half of a new record fails it (not so a sum, when both grow by 1). */
function check(seq: number, startedAt: number): number {
  return (
    (Math.imul((seq % 0x1_0000_0000) | 0, 0x9e3779b1) ^ Math.imul((startedAt % 0x1_0000_0000) | 0, 0x85ebca6b)) >>> 0
  );
}

/** A job's start as the record holds it. */
export interface RecordedStart {
  seq: number;
  /** Epoch ms, from the child's clock. */
  startedAt: number;
}

/** The child's end: one positional write per start, into a buffer allocated once. */
export class StartRecordWriter {
  private readonly values = new Float64Array(3);
  private readonly bytes = new Uint8Array(this.values.buffer);

  constructor(private readonly fd: number) {}

  /** Records the start; throws if the write fails (the caller then falls back to ACK frames). */
  write(seq: number, startedAt: number): void {
    const v = this.values;
    v[0] = seq;
    v[1] = startedAt;
    v[2] = check(seq, startedAt);
    writeSync(this.fd, this.bytes, 0, RECORD_BYTES, 0);
  }
}

/** The parent's end: creates the file, unlinked at once (the two fds keep it alive, nothing is left behind). */
export class StartRecordReader {
  private readonly values = new Float64Array(3);
  private readonly bytes = new Uint8Array(this.values.buffer);
  private closed = false;

  private constructor(readonly fd: number) {}

  /** A new record, or undefined when no file can be made (the child then sends ACK frames). */
  static create(): StartRecordReader | undefined {
    const path = childFilePath('start');
    let fd: number;
    try {
      fd = openSync(path, 'wx+', 0o600);
    } catch {
      return undefined;
    }
    try {
      unlinkSync(path);
    } catch {
      // Left behind in a temp directory: harmless, and the record still works.
    }
    return new StartRecordReader(fd);
  }

  /** The last start the child recorded, or undefined if it recorded none (or the file is gone). */
  read(): RecordedStart | undefined {
    if (this.closed) return undefined;
    const v = this.values;
    for (let i = 0; i < READ_ATTEMPTS; i++) {
      let n: number;
      try {
        n = readSync(this.fd, this.bytes, 0, RECORD_BYTES, 0);
      } catch {
        return undefined;
      }
      if (n < RECORD_BYTES) return undefined;
      const seq = v[0] as number;
      const startedAt = v[1] as number;
      if (check(seq, startedAt) === v[2]) return { seq, startedAt };
    }
    return undefined;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      closeSync(this.fd);
    } catch {
      // Already closed: nothing to release.
    }
  }
}
