// RSS, PSS and USS of a process tree, from /proc/<pid>/smaps_rollup (kB → MiB).
// PSS splits each shared page among the processes mapping it, so it depends on
// how many other processes (other Node processes: the node binary's pages)
// share them at that moment; USS (Private_Clean + Private_Dirty: the pages
// only this process maps) does not.
import { readFileSync, readdirSync } from 'node:fs';

function descendants(pid) {
  const out = [];
  let tasks = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of text.trim().split(/\s+/).filter(Boolean).map(Number)) out.push(child, ...descendants(child));
  }
  return out;
}

function rollup(pid) {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return { rss: kb('Rss'), pss: kb('Pss'), uss: kb('Private_Clean') + kb('Private_Dirty') };
}

/** { processes, rssMiB, pssMiB, ussMiB, perProcess (kB) } summed over `pid` and all its descendants. */
export function treeMemory(pid = process.pid) {
  const pids = [pid, ...descendants(pid)];
  const perProcess = pids.map((p) => ({ pid: p, ...rollup(p) }));
  const sum = (k) => perProcess.reduce((a, x) => a + x[k], 0) / 1024;
  return { processes: pids.length, rssMiB: sum('rss'), pssMiB: sum('pss'), ussMiB: sum('uss'), perProcess };
}

/** "pid rss … pss … uss …; …" (MiB) for a check line. */
export function perProcess(m) {
  const mib = (kb) => (kb / 1024).toFixed(1);
  return m.perProcess.map((p) => `${p.pid} rss ${mib(p.rss)} pss ${mib(p.pss)} uss ${mib(p.uss)}`).join('; ');
}
