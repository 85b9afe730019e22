import { resultTtlOf, retryDelayMs } from '../../job-option-checks.js';
import { isFinalState } from '../job-state.js';
import type { JobRecord, NewJob, ResultRecord, Settlement } from '../types.js';
import type { MemoryState } from './memory-state.js';
import type { FlowHost } from './workflows.js';

export interface SettleContext {
  readonly state: MemoryState;
  readonly resultTtl: number;
  readonly deadMax: number;
  readonly now: number;
  /** Queues whose waiting or delayed jobs changed (their waiters are told afterwards). */
  readonly touched: Set<string>;
}

/**
 * Applies settlements, as the Redis fetch script does: each one ends its
 * reservation and moves the job on (ack: gone; retry: delayed, attempt + 1, redeliveries 0;
 * dead: dead set; giveBack: front of its queue, redeliveries + 1 unless `spread`; defer:
 * delayed, marked with its rate-limit slot when `slot`). A receipt
 * no longer held (a fenced node's late settle: the job was recovered and
 * delivered again under a new receipt) moves nothing, and its result is
 * written only where none is stored (the run that replaced it keeps its
 * outcome; storeResults-n.lua does the same with the unapplied set). A
 * result is written unless the job asked for none, and a final state is
 * announced to the client waiting for it.
 */
export function applySettlements(ctx: SettleContext, settlements: readonly Settlement[]): void {
  const { state, now } = ctx;
  for (const s of settlements) {
    let late = false;
    if (s.kind !== 'progress') {
      const held = state.reservations.release(s.delivery.receipt);
      late = held === undefined;
      if (held !== undefined) {
        const { queue, job } = held.delivery;
        const q = state.queue(queue);
        if (s.kind === 'retry') {
          // A retry is an outcome: deliveries lost before it do not count toward a poison job (fetchJobs-n.lua).
          const retried = withoutSlot({ ...job, attempt: job.attempt + 1, redeliveries: 0 });
          q.addDelayed({ dueAt: now + retryDelayMs(s.delay), job: retried });
          ctx.touched.add(queue);
        } else if (s.kind === 'dead') {
          q.bury({ job, reason: s.reason, diedAt: now }, ctx.deadMax);
        } else if (s.kind === 'giveBack') {
          q.rd.push(s.spread === true ? job : withoutSlot({ ...job, redeliveries: job.redeliveries + 1 }));
          ctx.touched.add(queue);
        } else if (s.kind === 'defer') {
          const dueAt = now + retryDelayMs(Math.ceil(s.delay));
          const deferred = withoutSlot({ ...job });
          if (s.slot) deferred.rateSlot = dueAt;
          q.addDelayed({ dueAt, job: deferred, rateLimited: true });
          ctx.touched.add(queue);
        }
        if (s.kind === 'ack' || s.kind === 'dead') {
          const kept = s.result !== undefined && job.options.ignoreResult !== true;
          state.ended(job, kept ? now + resultTtlOf(job.options, ctx.resultTtl) : undefined, now);
        }
      }
    }
    if (s.kind === 'giveBack' || s.kind === 'defer' || s.result === undefined) continue;
    const { job } = s.delivery;
    if (job.options.ignoreResult === true) continue;
    if (late && state.results.has(s.result.id, now)) continue;
    state.results.set(s.result, resultTtlOf(job.options, ctx.resultTtl), now);
    if (job.replyTo !== undefined && isFinalState(s.result.state)) state.results.announce(job.replyTo, s.result.id);
  }
  state.workflows.settle(settlements, now, () => flowHost(state, ctx.touched, now));
}

/** How a workflow adds its next jobs and announces its end on the memory broker. */
export function flowHost(state: MemoryState, touched: Set<string>, now: number): FlowHost {
  return {
    enqueue(job: NewJob): void {
      state.place(job, now, touched);
    },
    finished(result: ResultRecord, reply: string, ttlMs: number): void {
      state.results.set(result, ttlMs, now);
      if (reply !== '') state.results.announce(reply, result.id);
    },
  };
}

/** A retry, a give-back or a dead job put back asks its rate limit again: the slot it held is spent. */
export function withoutSlot(job: JobRecord): JobRecord {
  delete job.rateSlot;
  return job;
}
