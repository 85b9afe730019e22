import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync, unlinkSync, writeSync, constants } from 'node:fs';
import { childFilePath } from '../util/child-file.js';

/**
 * The claim pipe: a FIFO shared by a child and its parent that holds one
 * byte for each job written to the child (fair scheduling) and not started.
 * The child takes a byte before it starts a job; the parent takes bytes to
 * take jobs back. A pipe gives each byte to one reader only, so a job the
 * parent took back never starts, and a job that started is never taken
 * back, without waiting for the child: it may be busy in a job that blocks
 * its event loop. Both ends read without blocking.
 *
 * Bytes are not tied to jobs: the child claims from the front of what it
 * holds and the parent takes from the back, so when the parent takes `n`
 * bytes, the last `n` jobs it wrote are its own again. Until the child has
 * said it dropped them (DROPPED), no new job goes to it: a new byte could
 * otherwise let one of them start.
 */

/** The fd a child finds its claim pipe on (the parent passes it as the fifth stdio entry). */
export const CLAIM_FD = 4;

const ONES = Buffer.alloc(256, 1);

/** The parent's end: the FIFO is unlinked as soon as both ends can open it (nothing is left behind). */
export class ClaimPipe {
  private readonly scratch = Buffer.alloc(256);
  private closed = false;

  private constructor(readonly fd: number) {}

  /**
   * A new claim pipe, or undefined when none can be made (no `mkfifo`, no
   * writable temp directory): the child then gets one job at a time.
   */
  static create(): ClaimPipe | undefined {
    const path = childFilePath('claim');
    let fd: number;
    try {
      // Node has no mkfifo(3): coreutils' does it, once per child.
      execFileSync('mkfifo', ['-m', '600', path], { stdio: 'ignore' });
      // Read and write: opening never blocks, and the pipe never reports end-of-file.
      fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
    } catch {
      return undefined;
    } finally {
      try {
        unlinkSync(path);
      } catch {
        // Never created, or left behind in a temp directory: harmless.
      }
    }
    return new ClaimPipe(fd);
  }

  /**
   * One byte per job written: before the jobs themselves, so the child never
   * sees a job without its byte. Throws when the pipe fails: the jobs must
   * then not be written.
   */
  give(jobs: number): void {
    for (let left = jobs; left > 0;) {
      const n = Math.min(left, ONES.length);
      writeSync(this.fd, ONES, 0, n);
      left -= n;
    }
  }

  /**
   * Takes up to `max` bytes: the last that many unstarted jobs are the
   * parent's again. 0 when the child claimed them all, or when the pipe
   * fails: the jobs then simply stay with the child.
   */
  take(max: number): number {
    let got = 0;
    while (got < max && !this.closed) {
      let n: number;
      try {
        n = readSync(this.fd, this.scratch, 0, Math.min(max - got, this.scratch.length), null);
      } catch {
        break;
      }
      if (n === 0) break;
      got += n;
    }
    return got;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}

/** The child's end. */
export class ClaimTaker {
  private readonly byte = Buffer.alloc(1);

  constructor(private readonly fd: number) {}

  /** True: the job may start. False: the parent took it back. Throws when the pipe itself fails. */
  claim(): boolean {
    try {
      return readSync(this.fd, this.byte, 0, 1, null) === 1;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return false;
      throw err;
    }
  }
}
