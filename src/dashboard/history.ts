/** One queue's waiting jobs at one sample: what the depth chart plots. */
export interface QueueDepth {
  queue: string;
  waiting: number;
}

/**
 * Queues a sample keeps, the first by name (the depth chart draws as many).
 * Every sample is kept HISTORY_SAMPLES times over and sent whole with each
 * page load: with every queue's counts in it, 1,000 queues made the
 * overview 20 MB and the history hundreds of thousands of objects.
 */
export const CHART_QUEUES = 20;

/** What the charts plot at one point in time. */
export interface Sample {
  /** Epoch ms (this process's clock). */
  at: number;
  /** The waiting jobs of the first CHART_QUEUES queues by name. */
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

/** A sample from the counts read (`queues` sorted by name, as queueOverview gives them) and the outcomes counted over `intervalMs`. */
export function makeSample(
  at: number,
  queues: readonly QueueDepth[],
  outcomes: { succeeded: number; failed: number },
  intervalMs: number,
): Sample {
  const seconds = Math.max(intervalMs, 1) / 1000;
  const finished = outcomes.succeeded + outcomes.failed;
  return {
    at,
    queues: queues.slice(0, CHART_QUEUES).map(({ queue, waiting }) => ({ queue, waiting })),
    succeeded: round(outcomes.succeeded / seconds),
    failed: round(outcomes.failed / seconds),
    failureRate: finished === 0 ? 0 : round(outcomes.failed / finished),
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
