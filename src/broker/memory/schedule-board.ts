import type { ClaimReply, ClaimResult, PublishReply, ScheduleDefinition, ScheduleState, TickClaim } from '../types.js';
import type { NewJob } from '../types.js';

interface Stored {
  definition: string;
  hash: string;
  last: number;
  lastTick?: number;
  lastRunAt?: number;
  lastJobId?: string;
}

/**
 * The memory twin of the Redis schedule keys: each entry's definition and
 * latest tick handled, claimed by compare-and-set as claimTicks-n.lua does
 * (synchronously: one process, so each call is atomic).
 */
export class ScheduleBoard {
  private readonly entries = new Map<string, Stored>();

  publish(entries: readonly ScheduleDefinition[], now: number): PublishReply {
    const states = entries.map((e) => {
      let cur = this.entries.get(e.name);
      if (cur === undefined || cur.hash !== e.hash) {
        const last = cur === undefined && e.since !== undefined ? Math.min(e.since, now) : now;
        cur = { ...cur, definition: e.definition, hash: e.hash, last };
        this.entries.set(e.name, cur);
      }
      return { name: e.name, hash: cur.hash, last: cur.last };
    });
    return { skew: 0, states };
  }

  /** Claims as the Redis script does; `enqueue` adds the jobs of a claim that won. */
  claim(claims: readonly TickClaim[], now: number, enqueue: (jobs: readonly NewJob[]) => void): ClaimReply {
    const results = claims.map((c): ClaimResult => {
      const cur = this.entries.get(c.name);
      if (cur === undefined) return { outcome: 'unknown' };
      const state: ScheduleState = { name: c.name, hash: cur.hash, last: cur.last };
      if (cur.hash !== c.hash) return { outcome: 'stale', state: { ...state, definition: cur.definition } };
      if (cur.last !== c.expectedLast || c.newLast <= c.expectedLast) return { outcome: 'stale', state };
      if (c.newLast > now) return { outcome: 'early', state };
      enqueue(c.jobs);
      cur.last = c.newLast;
      const lastJob = c.jobs.at(-1);
      if (lastJob !== undefined) {
        cur.lastTick = lastJob.scheduledFor;
        cur.lastRunAt = now;
        cur.lastJobId = lastJob.id;
      }
      return { outcome: 'claimed', state: { ...state, last: c.newLast } };
    });
    return { skew: 0, results };
  }

  list(): ScheduleState[] {
    return [...this.entries.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, s]) => ({ name, ...s }));
  }

  drop(names: readonly string[]): number {
    let dropped = 0;
    for (const name of names) if (this.entries.delete(name)) dropped++;
    return dropped;
  }
}
