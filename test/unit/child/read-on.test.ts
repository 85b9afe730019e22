/**
 * JobRunner.readOn's bound: however jobs end (a sync task inside the read's
 * decode, an async one in a promise settlement), it reads inq itself at most
 * READS_PER_TURN times before the event loop gets a turn. The channel is a
 * double with an endless inq: each read hands over one job, as a read of
 * fair's job written ahead does.
 */
import { describe, expect, it } from 'vitest';
import { JobRunner, READS_PER_TURN } from '../../../dist/child/job-runner.js';
import type { ParentChannel } from '../../../dist/child/channel.js';
import { MessageType, type JobFrame } from '../../../dist/protocol/messages.js';

const JOBS = 10 * READS_PER_TURN;

/** Runs JOBS jobs of `task`, and counts the reads of inq between turns of the event loop. */
async function readsPerTurn(task: () => unknown): Promise<{ ran: number; perTurn: number[] }> {
  let seq = 0;
  let handingOver = false;
  let turn = 0;
  const perTurn: number[] = [0];
  const channel = {
    send: () => undefined,
    flush: () => true,
    get pending() {
      return 0;
    },
    readWaiting(): boolean {
      // As the real channel: no read while frames are being handed over.
      if (handingOver || seq >= JOBS) return false;
      perTurn[turn] = (perTurn[turn] ?? 0) + 1;
      handingOver = true;
      try {
        runner.push([MessageType.JOB, ++seq, 'task', [], null] as JobFrame);
      } finally {
        handingOver = false;
      }
      return true;
    },
  } as unknown as ParentChannel;
  const watch = { jobStarted: () => undefined, idle: () => undefined };
  let ran = 0;
  const tasks = new Map([['task', () => (ran++, task())]]);
  const runner = new JobRunner(tasks, channel, false, watch, () => undefined, undefined, undefined);
  // Each turn of the loop: the stream would bring a chunk and readOn follow it.
  while (seq < JOBS) {
    runner.readOn();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    perTurn[++turn] = 0;
  }
  return { ran, perTurn: perTurn.filter((n) => n > 0) };
}

describe('a child reading jobs that came while it ran others', () => {
  it('reads at most READS_PER_TURN times per turn of the event loop when its tasks are sync', async () => {
    const { ran, perTurn } = await readsPerTurn(() => 1);
    expect(ran).toBe(JOBS);
    expect(Math.max(...perTurn)).toBe(READS_PER_TURN);
  });

  it('and when each job settles in a promise, which runs the next without a turn of the loop', async () => {
    const { ran, perTurn } = await readsPerTurn(() => Promise.resolve(1));
    expect(ran).toBe(JOBS);
    expect(Math.max(...perTurn)).toBe(READS_PER_TURN);
  });
});
