import type { Logger } from 'pino';
import type { NodeInfo } from '../broker/types.js';
import { messageOf } from '../errors.js';
import { abortableSleep } from '../util/sleep.js';
import type { WorkerStats } from '../worker.js';
import { askNodes, failure, NoSuchNodeError, type NodeAsker } from '../cli/control-request.js';
import { queueOverview, type QueueRow } from '../cli/queue-overview.js';
import type { EventTally } from './event-tally.js';
import { History, makeSample, type Sample } from './history.js';
import type { TaskRuntimes } from './runtimes.js';

/** A node as the page shows it: as registered, with its stats (`prefork inspect stats`) or why they are missing. */
export interface NodeView extends NodeInfo {
  stats?: WorkerStats;
  error?: string;
}

/** Everything the page shows but the job pages and one job: what each sample sends to the browsers. */
export interface Snapshot {
  /** Epoch ms when the sample was taken. */
  at: number;
  /** How long reading it took (ms): the queue counts and the nodes' answers. */
  sampledInMs: number;
  nodes: NodeView[];
  queues: QueueRow[];
  runtimes: TaskRuntimes[];
  sample: Sample;
  /** Why the last read failed (the broker away): the page says so and keeps the last numbers. */
  error?: string;
}

type SamplerBroker = NodeAsker & Parameters<typeof queueOverview>[0];

/**
 * Reads the queue counts and asks the nodes for their stats every
 * `intervalMs` (the same reads as `prefork inspect queues` and `inspect
 * stats`), adds the outcomes the events brought, keeps the charts' history
 * and hands each snapshot to `onSnapshot`.
 */
export class Sampler {
  readonly history: History;
  private current: Snapshot | undefined;
  private lastAt = Date.now();
  private failing = false;
  /** The read in flight: one at a time, so each interval and history entry is its own. */
  private inflight: Promise<Snapshot> | undefined;
  /** The read queued behind it for `sampleAfter`. */
  private queued: Promise<Snapshot> | undefined;

  constructor(
    private readonly broker: SamplerBroker,
    private readonly tally: EventTally,
    private readonly options: { intervalMs: number; controlTimeoutMs: number; historySize: number },
    private readonly onSnapshot: (s: Snapshot) => void,
    private readonly log: Logger,
  ) {
    this.history = new History(options.historySize);
  }

  /** The last snapshot (taken at start, so never undefined once `start` resolved). */
  latest(): Snapshot | undefined {
    return this.current;
  }

  /** Takes the first sample, then one per interval until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    await this.sampleOnce();
    void this.loop(signal);
  }

  private async loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await abortableSleep(this.options.intervalMs, signal);
      if (!signal.aborted) await this.sampleOnce();
    }
  }

  /** Takes a sample; callers asking while one is read get that one. */
  sampleOnce(): Promise<Snapshot> {
    return (this.inflight ??= this.read().finally(() => (this.inflight = undefined)));
  }

  /** A sample read from now on (after an action: its effect shows), after the one in flight if any. */
  sampleAfter(): Promise<Snapshot> {
    const current = this.inflight;
    if (current === undefined) return this.sampleOnce();
    return (this.queued ??= current
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.sampleOnce();
      }));
  }

  private async read(): Promise<Snapshot> {
    const started = performance.now();
    const at = Date.now();
    try {
      const [queues, nodes] = await Promise.all([queueOverview(this.broker), this.nodes()]);
      const sample = makeSample(at, queues, this.tally.take(), at - this.lastAt);
      this.lastAt = at;
      this.history.add(sample);
      this.current = {
        at,
        sampledInMs: Math.round((performance.now() - started) * 10) / 10,
        nodes,
        queues,
        runtimes: this.tally.runtimes.percentiles(),
        sample,
      };
      if (this.failing) this.log.info('reading the broker again');
      this.failing = false;
    } catch (err) {
      if (!this.failing)
        this.log.warn({ err }, 'reading the queues or the nodes failed; the page keeps the last numbers');
      this.failing = true;
      const last = this.current;
      this.current = {
        at,
        sampledInMs: Math.round(performance.now() - started),
        nodes: last?.nodes ?? [],
        queues: last?.queues ?? [],
        runtimes: last?.runtimes ?? [],
        sample: last?.sample ?? makeSample(at, [], { succeeded: 0, failed: 0 }, 1),
        error: messageOf(err),
      };
    }
    this.onSnapshot(this.current);
    return this.current;
  }

  private async nodes(): Promise<NodeView[]> {
    let answers;
    try {
      answers = await askNodes(this.broker, 'stats', [], undefined, this.options.controlTimeoutMs);
    } catch (err) {
      if (err instanceof NoSuchNodeError) return [];
      throw err;
    }
    return answers.map(({ node, reply }) => {
      if (reply?.ok === true) return { ...node, stats: reply.value as WorkerStats };
      return { ...node, error: failure(reply, this.options.controlTimeoutMs) };
    });
  }
}
