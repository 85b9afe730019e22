import { afterEach, describe, expect, it } from 'vitest';
import { Fifo } from '../../../dist/util/fifo.js';
import { Lookahead, TAKE_FOR_IDLE_MS, worthTaking } from '../../../dist/pool/lookahead.js';

interface FakeJob {
  seq: number;
}

/** A child as the Lookahead sees it: jobs in flight, when it became free for its head, and takeBack from the back. */
function child(held: number, freeAt: number) {
  const inFlight = new Fifo<FakeJob>();
  for (let i = 1; i <= held; i++) inFlight.push({ seq: i });
  return {
    inFlight,
    freeAt,
    takeBack(max: number): FakeJob[] {
      const n = Math.min(max, inFlight.length - 1);
      return inFlight.popBack(n);
    },
  };
}

const lookaheads: Lookahead[] = [];
afterEach(() => {
  for (const l of lookaheads.splice(0)) l.stop();
});

function lookahead(children: ReturnType<typeof child>[], meanRunMs: number, recheck: () => void = () => undefined) {
  const l = new Lookahead({
    children: () => children as never,
    giveBack: () => undefined,
    mayDispatch: () => true,
    meanRunMs: () => meanRunMs,
    recheck,
  });
  lookaheads.push(l);
  return l;
}

describe('Lookahead: jobs held ahead, taken for an idle child', () => {
  it('takes half of what the busiest child holds once it is worth TAKE_FOR_IDLE_MS by the mean job time', () => {
    const busy = child(9, performance.now());
    const taken = lookahead([busy], TAKE_FOR_IDLE_MS).forIdle(1);
    // 8 held ahead of the running one: half of them, from the back.
    expect(taken.map((j) => j.seq)).toEqual([6, 7, 8, 9]);
    expect(busy.inFlight.length).toBe(5);
  });

  it('leaves tiny jobs where they are, and looks again once they may be worth taking', async () => {
    const busy = child(9, performance.now());
    let rechecked!: () => void;
    const recheck = new Promise<void>((resolve) => (rechecked = resolve));
    // 8 jobs of 1 µs: far less than TAKE_FOR_IDLE_MS.
    const taken = lookahead([busy], 0.001, rechecked).forIdle(1);
    expect(taken).toEqual([]);
    expect(busy.inFlight.length).toBe(9);
    await recheck;
  });

  it('takes them, however small, from a child on its current job for TAKE_FOR_IDLE_MS or more (a long job in front)', () => {
    const busy = child(3, performance.now() - TAKE_FOR_IDLE_MS);
    const taken = lookahead([busy], 0.001).forIdle(1);
    expect(taken.map((j) => j.seq)).toEqual([3]);
  });

  it('worthTaking: by held jobs × mean time, or by time on the current job', () => {
    const now = performance.now();
    expect(worthTaking(child(2, now) as never, TAKE_FOR_IDLE_MS, now)).toBe(true);
    expect(worthTaking(child(2, now) as never, TAKE_FOR_IDLE_MS / 2, now)).toBe(false);
    expect(worthTaking(child(3, now) as never, TAKE_FOR_IDLE_MS / 2, now)).toBe(true);
    expect(worthTaking(child(2, now - TAKE_FOR_IDLE_MS) as never, 0, now)).toBe(true);
  });
});
