/** Runtime percentiles of one task, over its last `RUNTIMES_KEPT` outcomes. */
export interface TaskRuntimes {
  task: string;
  /** Outcomes with a runtime seen since the dashboard started. */
  count: number;
  /** Milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Runtimes kept per task: the percentiles are over this many recent jobs. */
export const RUNTIMES_KEPT = 1_000;
/** Tasks tracked; a task first seen past this many is not (task names come from the nodes' modules: few). */
export const TASKS_KEPT = 500;

/** The recent runtimes of each task, from the job events (`runtimeMs`). */
export class Runtimes {
  private readonly byTask = new Map<string, { ring: number[]; next: number; count: number }>();

  add(task: string, ms: number): void {
    let entry = this.byTask.get(task);
    if (entry === undefined) {
      if (this.byTask.size >= TASKS_KEPT) return;
      entry = { ring: [], next: 0, count: 0 };
      this.byTask.set(task, entry);
    }
    if (entry.ring.length < RUNTIMES_KEPT) entry.ring.push(ms);
    else entry.ring[entry.next] = ms;
    entry.next = (entry.next + 1) % RUNTIMES_KEPT;
    entry.count++;
  }

  /** Every task's percentiles, by task name. */
  percentiles(): TaskRuntimes[] {
    return [...this.byTask.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([task, { ring, count }]) => {
        const sorted = [...ring].sort((a, b) => a - b);
        return {
          task,
          count,
          p50: rank(sorted, 0.5),
          p90: rank(sorted, 0.9),
          p99: rank(sorted, 0.99),
          max: sorted.at(-1) ?? 0,
        };
      });
  }
}

/** The nearest-rank percentile of a sorted list. */
function rank(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}
