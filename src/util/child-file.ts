import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A fresh path for a file the parent shares with one child (its start
 * record, its claim pipe): on tmpfs where there is one, so its pages are
 * never written to a disk, and named after this process.
 */
export function childFilePath(kind: string): string {
  const dir = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  return join(dir, `prefork-${kind}-${process.pid}-${Math.random().toString(36).slice(2)}`);
}
