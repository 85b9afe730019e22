import type { NodeEvent } from '../events/node-event.js';

/** One step of a job's life as the events told it. */
export interface TrailStep {
  type: NodeEvent['type'];
  at: number;
  node: string;
  pid?: number;
  attempt?: number;
  runtimeMs?: number;
  error?: { name: string; message: string };
}

/** Jobs whose steps are kept (the most recent ones), and steps kept per job. */
export const TRAILS_KEPT = 10_000;
export const STEPS_KEPT = 32;
/**
 * Characters of a step's error name and message kept: the history shows
 * one line per step, and the job's record has the error whole. A message
 * kept whole in every step of TRAILS_KEPT jobs would make the memory this
 * costs as large as the errors the tasks throw.
 */
export const STEP_ERROR_MAX = 500;

/**
 * The state history of recent jobs, from the events stream the dashboard
 * follows: bounded (the oldest job's trail goes first), so a busy cluster
 * costs the dashboard a fixed amount of memory.
 */
export class JobTrails {
  private readonly trails = new Map<string, TrailStep[]>();

  add(e: NodeEvent): void {
    if (e.jobId === undefined) return;
    let steps = this.trails.get(e.jobId);
    if (steps === undefined) {
      steps = [];
      this.trails.set(e.jobId, steps);
      if (this.trails.size > TRAILS_KEPT) {
        const oldest = this.trails.keys().next().value;
        if (oldest !== undefined) this.trails.delete(oldest);
      }
    }
    if (steps.length >= STEPS_KEPT) steps.shift();
    const step: TrailStep = { type: e.type, at: e.at, node: e.node };
    if (e.pid !== undefined) step.pid = e.pid;
    if (e.attempt !== undefined) step.attempt = e.attempt;
    if (e.runtimeMs !== undefined) step.runtimeMs = e.runtimeMs;
    if (e.error !== undefined) step.error = { name: cut(e.error.name), message: cut(e.error.message) };
    steps.push(step);
  }

  of(jobId: string): TrailStep[] {
    return this.trails.get(jobId) ?? [];
  }
}

/** `text` within STEP_ERROR_MAX characters (ending in … when cut, never in half a surrogate pair), in a string of its own. */
function cut(text: string): string {
  if (text.length <= STEP_ERROR_MAX) return text;
  const kept = text.slice(0, STEP_ERROR_MAX - 1).replace(/[\uD800-\uDBFF]$/, '');
  // A slice may share the long string's memory (V8): a copy lets it go.
  return Buffer.from(`${kept}…`, 'utf16le').toString('utf16le');
}
