import { afterEach, describe, expect, it, vi } from 'vitest';
import { Fifo } from '../../../dist/util/fifo.js';
import { Lookahead, TAKE_BACK_AFTER_MS, TAKE_FOR_IDLE_MS, worthTaking } from '../../../dist/pool/lookahead.js';

interface FakeJob {
  seq: number;
  /** Epoch ms the start record gave it; 0 = not known to have started. */
  startedAt: number;
}

/**
 * A child as the Lookahead sees it: jobs in flight, when it became free for
 * its head (performance.now()), the epoch ms its head started at or after,
 * and takeBack from the back.
 */
function child(held: number, freeAt: number, headStartFloor = Date.now()) {
  const inFlight = new Fifo<FakeJob>();
  for (let i = 1; i <= held; i++) inFlight.push({ seq: i, startedAt: 0 });
  return {
    inFlight,
    freeAt,
    headStartFloor,
    heldBy: 0,
    /** How often the start record was read. */
    reads: 0,
    /** What the start record says of the head: when it started (epoch ms), once it has. */
    headStartedAt: 0,
    learnStarts(): void {
      this.reads++;
      const head = this.inFlight.peek();
      if (head !== undefined && head.startedAt === 0) head.startedAt = this.headStartedAt;
    },
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

function lookahead(
  children: ReturnType<typeof child>[],
  meanRunMs: number,
  recheck: () => void = () => undefined,
  givenBack: FakeJob[][] = [],
) {
  const l = new Lookahead({
    children: () => children as never,
    giveBack: (jobs) => givenBack.push(jobs),
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

describe('Lookahead: jobs held ahead of a job that runs long', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A child finishes its head job, a 2 ms one: the next one is its head, started after that one did. */
  function finishHead(c: ReturnType<typeof child>): void {
    c.inFlight.shift();
    c.inFlight.push({ seq: c.inFlight.length + 100, startedAt: 0 });
    c.freeAt = performance.now();
    c.headStartFloor = Date.now() - 2;
  }

  it('reads no start record while the child keeps finishing jobs', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
    const busy = child(3, performance.now());
    const givenBack: FakeJob[][] = [];
    const l = lookahead([busy], 2, undefined, givenBack);
    l.wroteAhead(busy as never);
    for (let i = 0; i < 50; i++) {
      vi.advanceTimersByTime(2);
      finishHead(busy);
    }
    expect(busy.reads).toBe(0);
    expect(givenBack).toEqual([]);
  });

  it('takes them back once the job in front has run TAKE_BACK_AFTER_MS', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
    const stuck = child(4, performance.now());
    stuck.headStartedAt = Date.now();
    const givenBack: FakeJob[][] = [];
    lookahead([stuck], 2, undefined, givenBack).wroteAhead(stuck as never);
    vi.advanceTimersByTime(TAKE_BACK_AFTER_MS - 1);
    expect(givenBack).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(givenBack.map((jobs) => jobs.map((j) => j.seq))).toEqual([[2, 3, 4]]);
    expect(stuck.heldBy).toBe(1);
  });

  it('looks sooner for a child whose job began before another child was written ahead', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
    const fresh = child(3, performance.now());
    const givenBack: FakeJob[][] = [];
    const children = [fresh];
    const l = lookahead(children, 2, undefined, givenBack);
    l.wroteAhead(fresh as never);
    // A child on one job for TAKE_BACK_AFTER_MS - 2 ms is now written ahead: its look is due in 2 ms, not 10.
    const long = child(3, performance.now() - (TAKE_BACK_AFTER_MS - 2), Date.now() - (TAKE_BACK_AFTER_MS - 2));
    long.headStartedAt = Date.now() - (TAKE_BACK_AFTER_MS - 2);
    children.push(long);
    l.wroteAhead(long as never);
    vi.advanceTimersByTime(2);
    expect(givenBack.map((jobs) => jobs.map((j) => j.seq))).toEqual([[2, 3]]);
    expect(fresh.reads).toBe(0);
  });

  it('looks again, not before it could be due, at a job that started after its child was free', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
    const late = child(2, performance.now());
    const givenBack: FakeJob[][] = [];
    lookahead([late], 2, undefined, givenBack).wroteAhead(late as never);
    // Free since now, but its job starts only 4 ms later (the child's event loop was busy).
    late.headStartedAt = Date.now() + 4;
    vi.advanceTimersByTime(TAKE_BACK_AFTER_MS);
    expect(late.reads).toBe(1);
    expect(givenBack).toEqual([]);
    vi.advanceTimersByTime(3);
    expect(late.reads).toBe(1);
    vi.advanceTimersByTime(1);
    expect(late.reads).toBe(2);
    expect(givenBack.map((jobs) => jobs.map((j) => j.seq))).toEqual([[2]]);
  });

  it('looks by when the job began, not by when the parent read the result before it', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance', 'Date'] });
    // The parent's event loop was busy: the last RESULT, of a job that began 40 ms ago, is read only now.
    const lagged = child(3, performance.now(), Date.now() - 40);
    lagged.headStartedAt = Date.now() - 38;
    const givenBack: FakeJob[][] = [];
    lookahead([lagged], 2, undefined, givenBack).wroteAhead(lagged as never);
    vi.advanceTimersByTime(1);
    expect(givenBack.map((jobs) => jobs.map((j) => j.seq))).toEqual([[2, 3]]);
  });
});
