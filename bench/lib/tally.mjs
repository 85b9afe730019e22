// Counting in the children, without a per-job message: each prefork child adds
// up the jobs it ran and writes {pid, count, sum} to $BENCH_TALLY_DIR when it
// exits. The scenario sums the files: every job done exactly once means
// count === N and sum === the expected sum of arguments.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let count = 0;
let sum = 0;
let armed = false;

/** Called by a task for every job it runs (two additions). */
export function tally(x) {
  count++;
  sum += x;
  if (!armed) {
    armed = true;
    const dir = process.env.BENCH_TALLY_DIR;
    if (dir)
      process.on('exit', () =>
        writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify({ pid: process.pid, count, sum })),
      );
  }
}

export function tallyDir() {
  return mkdtempSync(join(tmpdir(), 'prefork-bench-tally-'));
}

/** Sums the children's files and removes the directory. */
export function readTally(dir) {
  let total = { count: 0, sum: 0, children: 0 };
  for (const f of readdirSync(dir)) {
    const t = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    total = { count: total.count + t.count, sum: total.sum + t.sum, children: total.children + 1 };
  }
  rmSync(dir, { recursive: true, force: true });
  return total;
}

/** Compares a pool's tally() with what should have run; undefined when it has no tally (peers). */
export function tallyCheck(t, count, sum) {
  if (t === undefined) return { ok: true, text: '' };
  const ok = t.count === count && t.sum === sum;
  return { ok, text: `; children ran ${t.count}/${count} jobs${t.sum === sum ? '' : `, sum ${t.sum} != ${sum}`}` };
}
