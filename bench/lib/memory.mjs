// RSS and PSS of a process tree, from /proc/<pid>/smaps_rollup (kB → MiB).
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
  return { rss: kb('Rss'), pss: kb('Pss') };
}

/** { processes, rssMiB, pssMiB, perProcess } summed over `pid` and all its descendants. */
export function treeMemory(pid = process.pid) {
  const pids = [pid, ...descendants(pid)];
  const perProcess = pids.map((p) => ({ pid: p, ...rollup(p) }));
  const sum = (k) => perProcess.reduce((a, x) => a + x[k], 0) / 1024;
  return { processes: pids.length, rssMiB: sum('rss'), pssMiB: sum('pss'), perProcess };
}
