/** One queue's counts at one sample. */
export interface QueueDepth {
  queue: string;
  waiting: number;
  reserved: number;
  delayed: number;
  dead: number;
}

/** What the charts plot at one point in time. */
export interface Sample {
  /** Epoch ms (this process's clock). */
  at: number;
  /** Every queue's counts. */
  queues: QueueDepth[];
  /** Jobs that succeeded per second since the previous sample (from the events). */
  succeeded: number;
  /** Jobs that failed for good per second since the previous sample. */
  failed: number;
  /** failed / (succeeded + failed) over the interval; 0 when nothing finished. */
  failureRate: number;
}

/** The last `size` samples, oldest first: the charts' window, kept in memory by the dashboard. */
export class History {
  private readonly samples: Sample[] = [];

  constructor(private readonly size: number) {}

  add(sample: Sample): void {
    this.samples.push(sample);
    if (this.samples.length > this.size) this.samples.splice(0, this.samples.length - this.size);
  }

  all(): readonly Sample[] {
    return this.samples;
  }
}

/** A sample from the counts read and the outcomes counted over `intervalMs`. */
export function makeSample(
  at: number,
  queues: QueueDepth[],
  outcomes: { succeeded: number; failed: number },
  intervalMs: number,
): Sample {
  const seconds = Math.max(intervalMs, 1) / 1000;
  const finished = outcomes.succeeded + outcomes.failed;
  return {
    at,
    queues: queues.map(({ queue, waiting, reserved, delayed, dead }) => ({ queue, waiting, reserved, delayed, dead })),
    succeeded: round(outcomes.succeeded / seconds),
    failed: round(outcomes.failed / seconds),
    failureRate: finished === 0 ? 0 : round(outcomes.failed / finished),
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
