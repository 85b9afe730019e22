import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ProcRss } from '../../../dist/pool/proc-rss.js';

/** What /proc says now, read the plain way: resident pages × 4 KiB. */
function statmRss(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/statm`, 'latin1').split(' ')[1]) * 4096;
}

describe('ProcRss (a child’s resident memory through one open /proc file)', () => {
  it('reads the same resident size as /proc/<pid>/statm, afresh on every read', () => {
    const rss = new ProcRss(process.pid);
    const first = rss.read()!;
    const before = statmRss(process.pid);
    expect(first % 4096).toBe(0);
    // Pages come and go between two reads: the same order, not the same byte.
    expect(first).toBeGreaterThan(before / 2);
    expect(first).toBeLessThan(before * 2);
    // 64 MiB touched: a read through the same descriptor must see it.
    const ballast = Buffer.alloc(64 * 1024 * 1024, 1);
    expect(rss.read()!).toBeGreaterThan(first + 32 * 1024 * 1024);
    expect(ballast[ballast.length - 1]).toBe(1);
    rss.close();
  });

  it('is undefined for a process that is gone, and stays so without trying again', async () => {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    const rss = new ProcRss(child.pid!);
    await once(child, 'exit');
    // Reaped: its /proc entry is gone.
    expect(rss.read()).toBeUndefined();
    expect(rss.read()).toBeUndefined();
  });

  it('reads while the process lives, then undefined once it has exited and been reaped', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await once(child, 'spawn');
    const rss = new ProcRss(child.pid!);
    expect(rss.read()).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(rss.read()).toBeUndefined();
    rss.close();
  });

  it('is undefined without a pid (a child that never started)', () => {
    expect(new ProcRss(-1).read()).toBeUndefined();
  });
});
