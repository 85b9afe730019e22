import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chain, task } from 'prefork';
import { MemoryWorkflows, type FlowHost } from '../../../dist/broker/memory/workflows.js';
import type { NewJob, Settlement } from '../../../dist/broker/types.js';
import { encodeBody } from '../../../dist/protocol/codec.js';
import { compileWorkflow } from '../../../dist/workflow/compile.js';

/** A host that keeps the jobs a workflow starts. */
function host(started: NewJob[]): FlowHost {
  return { enqueue: (job) => started.push(job), finished: () => undefined };
}

/** A workflow of one job (its root), added at `now`; returns its id and that job. */
function addOne(flows: MemoryWorkflows, ttlMs: number, now: number): { id: string; job: NewJob } {
  const id = randomUUID();
  const workflow = compileWorkflow(chain(task('add', [1, 2])), id, (sig, _where, jobId) => ({
    id: jobId,
    task: sig.name,
    queue: 'default',
    payload: encodeBody([...sig.args]),
    attempt: 0,
    redeliveries: 0,
    options: {},
    enqueuedAt: now,
  }));
  const started: NewJob[] = [];
  flows.add(workflow, ttlMs, now, host(started));
  return { id, job: started[0] as NewJob };
}

/** The final settlement of a workflow's job, as the Consumer makes one (only what the workflows read). */
function succeeded(job: NewJob, value: unknown): Settlement {
  return { kind: 'ack', delivery: { job }, outcome: { ok: true, value } } as unknown as Settlement;
}

describe('MemoryWorkflows', () => {
  it('drops an ended workflow at its own expiry, though no workflow is added after it', () => {
    const flows = new MemoryWorkflows();
    const ended = addOne(flows, 1_000, 0);
    const pending = addOne(flows, 1_000, 0);
    flows.settle([succeeded(ended.job, 3)], 0, () => host([]));
    expect(flows.read(ended.id, false, 999, () => false)).toMatchObject({ state: 'SUCCESS', value: 3 });
    // Any later call sweeps it: even a read "in the past" no longer finds it. The pending one stays.
    expect(flows.read(pending.id, false, 5_000, () => false)).toMatchObject({ state: 'PENDING' });
    expect(flows.read(ended.id, false, 0, () => false)).toBeUndefined();
    expect(flows.has(pending.id, 10_000_000)).toBe(true);
  });
});
