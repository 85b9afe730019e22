import type { Logger } from 'pino';
import type { BrokerSchedule, ScheduleState, TickClaim } from '../broker/types.js';
import { messageOf } from '../errors.js';
import { retryDelay, type BackoffPolicy } from '../util/backoff.js';
import { timerMs } from '../util/units.js';
import { within } from '../util/within.js';
import { BrokerClock } from './broker-clock.js';
import { entryFromDefinition, type Schedule, type ScheduleEntry } from './define.js';
import { tickJob } from './tick-job.js';
import { planTicks } from './ticks.js';

/** Pauses after a failed claim or publish: 0.5 s doubling to 10 s. */
const RETRY: BackoffPolicy = { delay: 500, cap: 10_000 };

/**
 * A wake this much later than its timer asked means the node was not
 * watching (stopped by SIGSTOP, its event loop blocked): other nodes may
 * have fired ticks meanwhile that its view of the entries does not show.
 */
export const WATCH_GAP_MS = 1_000;

/**
 * How long a stop waits for the step in flight: a node's calls have no
 * timeout, and a claim that a frozen Redis holds must not hold the stop.
 */
export const STOP_STEP_MS = 5_000;

interface Live {
  entry: ScheduleEntry;
  /** The latest tick handled, as the broker last told (broker's clock); undefined until published. */
  last: number | undefined;
  /**
   * The node stopped watching since the broker told `last`: other nodes may
   * have handled later ticks, so `last` does not vouch for the ticks after it.
   */
  unsure: boolean;
  /** Claims the broker refused in a row (it cannot enqueue the entry's jobs). */
  refusals: number;
  /** After a refusal: the entry is not claimed again before this (broker's clock), so it holds up neither the node nor the others. */
  retryAt: number;
}

/**
 * Runs a node's schedule: one timer for the earliest due tick of all its
 * entries (nothing polls), then one claimTicks call for every entry due,
 * which fires each tick once per cluster (a compare-and-set in the broker,
 * the job enqueued in the same step). Another node's win, or a definition
 * another node published, comes back in the reply and is adopted.
 */
export class Scheduler {
  private readonly live = new Map<string, Live>();
  /** The broker's clock, set by each reply. */
  private readonly clock = new BrokerClock();
  private timer: NodeJS.Timeout | undefined;
  private waking: Promise<void> | undefined;
  private running = false;
  private failures = 0;
  /** Entries to publish (again) before the next claim: all at start, an entry whose state vanished later. */
  private unpublished: Set<string>;

  constructor(
    private readonly broker: BrokerSchedule,
    schedule: Schedule,
    private readonly log: Logger,
  ) {
    for (const [name, entry] of schedule.entries)
      this.live.set(name, { entry, last: undefined, unsure: false, refusals: 0, retryAt: 0 });
    this.unpublished = new Set(this.live.keys());
  }

  /** The entries' names. */
  get names(): string[] {
    return [...this.live.keys()];
  }

  /**
   * Warns of each entry whose task this node's task module does not define
   * while it consumes the entry's queue: every tick's job this node fetches
   * fails as an unknown task, to the dead set unrun. A node that does not
   * consume the queue says nothing: the nodes that do may define the task.
   */
  warnUnknownTasks(tasks: readonly string[], queues: readonly string[]): void {
    for (const { entry } of this.live.values()) {
      if (tasks.includes(entry.task) || !queues.includes(entry.queue)) continue;
      this.log.warn(
        { entry: entry.name, task: entry.task, queue: entry.queue },
        `schedule entry ${entry.name}: task ${entry.task} is not defined by this node's task module, and the node consumes queue ${entry.queue}: the entry's jobs it fetches fail as an unknown task`,
      );
    }
  }

  start(): void {
    if (this.running || this.live.size === 0) return;
    this.running = true;
    // Started again after a stop: what it knew is from before the stop.
    this.markUnsure();
    this.wake(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    const waking = this.waking;
    if (waking === undefined) return;
    const ended = await within(
      waking.then(() => true),
      STOP_STEP_MS,
    );
    if (ended === true) return;
    this.log.warn(
      { stopStepMs: STOP_STEP_MS },
      `schedule: the broker did not answer the claim in flight within ${STOP_STEP_MS} ms; stopping without its answer (if the broker runs it later, its ticks still fire once)`,
    );
  }

  private wake(after: number): void {
    clearTimeout(this.timer);
    const armedAt = performance.now();
    this.timer = setTimeout(() => {
      const began = performance.now();
      if (began - armedAt - after > WATCH_GAP_MS) this.markUnsure();
      this.waking = this.step()
        .then(
          () => {
            this.failures = 0;
          },
          (err: unknown) => {
            this.failures++;
            // A stop went on without this step (STOP_STEP_MS): the broker closed under it, nothing to retry.
            if (!this.running) {
              this.log.debug({ err }, `schedule: the step a stop left failed (${messageOf(err)})`);
              return;
            }
            this.log.warn(
              { err, failures: this.failures },
              `schedule: could not reach the broker (${messageOf(err)}); trying again (missed ticks follow each entry's misfire rule)`,
            );
          },
        )
        .finally(() => {
          // Stopped mid-step (the claim built but not yet sent, or its reply on the way back): the
          // timer was on time, and what the step heard may be older than what others did since.
          if (performance.now() - began > WATCH_GAP_MS) this.markUnsure();
          this.waking = undefined;
          this.arm();
        });
    }, after);
  }

  /** Sleeps until the earliest due tick (on the broker's clock), or a pause after a failure. */
  private arm(): void {
    if (!this.running) return;
    if (this.failures > 0 || this.unpublished.size > 0) {
      this.wake(retryDelay(Math.max(0, this.failures - 1), RETRY));
      return;
    }
    let due = Infinity;
    for (const { entry, last, retryAt } of this.live.values()) {
      const next = last === undefined ? undefined : entry.rule.next(last);
      if (next !== undefined) due = Math.min(due, Math.max(next, retryAt));
    }
    // A timer cannot wait longer than MAX_TIMER_MS: it wakes early, finds nothing due and sleeps again.
    if (due !== Infinity) this.wake(timerMs(due - this.clock.now()));
  }

  /** The node was not watching: every entry's view may be stale until the broker tells its state again. */
  private markUnsure(): void {
    for (const live of this.live.values()) if (live.last !== undefined) live.unsure = true;
  }

  private async step(): Promise<void> {
    if (this.unpublished.size > 0) await this.publish();
    await this.claimDue();
  }

  private async publish(): Promise<void> {
    // Every name in unpublished is one of live's, whose keys are fixed at construction.
    const lives = [...this.unpublished].map((name) => this.live.get(name) as Live);
    // An entry whose state vanished resumes from the latest tick this node saw handled: from the
    // broker's now, the tick it was claiming (and any missed since) would be lost. Not when this
    // node stopped watching since: other nodes may have fired the ticks after it before the state
    // vanished, and firing them again is worse than missing them (at most once per tick).
    const reply = await this.broker.publishSchedule(
      lives.map(({ entry, last, unsure }) => ({
        name: entry.name,
        definition: entry.definition,
        hash: entry.hash,
        ...(last !== undefined && !unsure ? { since: last } : {}),
      })),
    );
    this.clock.heard(reply.skew);
    for (const state of reply.states) {
      const live = this.live.get(state.name);
      if (live !== undefined) this.heard(live, state.last);
      this.unpublished.delete(state.name);
    }
  }

  private async claimDue(): Promise<void> {
    const now = this.clock.now();
    const claims: TickClaim[] = [];
    for (const { entry, last, retryAt } of this.live.values()) {
      if (last === undefined || now < retryAt) continue;
      const plan = planTicks(entry.rule, entry.misfire, last, now);
      if (plan === undefined) continue;
      claims.push({
        name: entry.name,
        hash: entry.hash,
        expectedLast: last,
        newLast: plan.last,
        jobs: plan.fire.map((tick) => tickJob(entry, tick)),
      });
    }
    if (claims.length === 0) return;
    const reply = await this.broker.claimTicks(claims);
    this.clock.heard(reply.skew);
    reply.results.forEach(({ outcome, state, reason }, i) => {
      const claim = claims[i] as TickClaim;
      const live = this.live.get(claim.name) as Live;
      if (outcome !== 'refused') live.refusals = 0;
      if (outcome === 'claimed') {
        // Said only by the node whose claim won: a node that was paused finds ticks missed that another fired.
        if (claim.jobs.length !== 1 || claim.jobs[0]?.scheduledFor !== live.entry.rule.next(claim.expectedLast))
          this.log.info(
            { entry: claim.name, misfire: live.entry.misfire, since: claim.expectedLast, firing: claim.jobs.length },
            `schedule entry ${claim.name} missed ticks (no node ran it, or the broker was away): misfire '${live.entry.misfire}' fires ${claim.jobs.length}`,
          );
        this.heard(live, claim.newLast);
        for (const job of claim.jobs)
          this.log.debug({ entry: claim.name, jobId: job.id, scheduledFor: job.scheduledFor }, 'schedule tick fired');
      } else if (outcome === 'unknown') {
        this.unpublished.add(claim.name);
      } else if (outcome === 'refused') {
        this.refused(live, reason);
      } else if (state !== undefined) {
        this.adopt(live, state);
      }
    });
  }

  /**
   * The broker cannot enqueue the entry's jobs (their queue's key holds
   * another type): nothing changed. The entry waits, 0.5 s doubling to 10 s,
   * before its next claim; its ticks missed meanwhile follow its misfire rule.
   */
  private refused(live: Live, reason = 'no reason given'): void {
    live.refusals++;
    live.retryAt = this.clock.now() + retryDelay(live.refusals - 1, RETRY);
    this.log.error(
      { entry: live.entry.name, queue: live.entry.queue, refusals: live.refusals },
      `schedule entry ${live.entry.name}: the broker refused its jobs (${reason}); trying again, its missed ticks follow its misfire rule`,
    );
  }

  /** The broker told the entry's latest tick handled: the node's view of it is current again. */
  private heard(live: Live, last: number): void {
    live.last = last;
    live.unsure = false;
  }

  /** Another node handled these ticks, or stored another definition of the entry: take what is in force. */
  private adopt(live: Live, state: ScheduleState): void {
    this.heard(live, state.last);
    if (state.definition === undefined || state.hash === live.entry.hash) return;
    try {
      live.entry = entryFromDefinition(live.entry.name, state.definition);
      this.log.info({ entry: live.entry.name }, `schedule entry ${live.entry.name} was redefined by another node`);
    } catch (err) {
      this.log.error({ err, entry: live.entry.name }, `schedule entry ${live.entry.name}: ${messageOf(err)}`);
    }
  }
}
