// CPU time of other processes (the pool's children), from /proc/<pid>/stat:
// utime + stime in clock ticks (USER_HZ, 100 on Linux) → ms. Resolution 10 ms,
// fine over a window of a second or more.
import { readFileSync } from 'node:fs';

const TICK_MS = 10;

/** Summed user + system CPU ms of these pids (a pid that is gone counts 0). */
export function cpuMsOf(pids) {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // fields 14 and 15 of proc(5): utime, stime
    } catch {
      // exited
    }
  }
  return ticks * TICK_MS;
}
