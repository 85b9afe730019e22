import { closeSync, openSync, readSync } from 'node:fs';

/** The page size /proc/<pid>/statm counts in (4 KiB on the platforms that have /proc). */
const PAGE_BYTES = 4096;

/**
 * A child's resident memory read from /proc/<pid>/statm through one file
 * descriptor kept open: each reading is one pread, where opening the file
 * each time cost four system calls and a string (stats() runs it per child,
 * and dashboards poll stats()). A procfs file is generated afresh by every
 * read at offset 0, and the descriptor stays with the process it was opened
 * for: once that one is reaped a read fails, where a path could name a new
 * process that got its pid. Undefined where /proc is missing or the process
 * is gone.
 */
export class ProcRss {
  private fd: number | undefined;
  /** Opening or reading failed (no /proc here, or the process is gone): not tried again. */
  private failed = false;
  private readonly buf = Buffer.alloc(128);

  constructor(private readonly pid: number) {}

  read(): number | undefined {
    if (this.failed || this.pid <= 0) return undefined;
    try {
      this.fd ??= openSync(`/proc/${this.pid}/statm`, 'r');
      const n = readSync(this.fd, this.buf, 0, this.buf.length, 0);
      return residentPages(this.buf, n) * PAGE_BYTES;
    } catch {
      this.close();
      this.failed = true;
      return undefined;
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Already closed: nothing held.
    }
  }
}

/** The second field of statm ("size resident shared ..."), read from its ASCII digits. */
function residentPages(buf: Buffer, length: number): number {
  let i = 0;
  while (i < length && buf[i] !== 0x20) i++;
  let pages = 0;
  let digits = 0;
  for (i++; i < length; i++) {
    const c = buf[i] as number;
    if (c < 0x30 || c > 0x39) break;
    pages = pages * 10 + (c - 0x30);
    digits++;
  }
  if (digits === 0) throw new Error('statm has no resident field');
  return pages;
}
