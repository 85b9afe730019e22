import type { Logger } from 'pino';
import type { BrokerPauses, BrokerRateLimits, BrokerRevokes, PausedQueue, RevokedJob } from '../broker/types.js';

/** What a resync reads: the settings the broker remembers. */
export type SettingsSource = Pick<BrokerPauses, 'listPaused'> &
  Pick<BrokerRateLimits, 'rateLimits'> &
  Pick<BrokerRevokes, 'listRevoked'>;

/** The remembered settings as read, for the node to follow. */
export interface RememberedSettings {
  readonly pauses: readonly PausedQueue[];
  readonly rates: ReadonlyMap<string, string>;
}

/**
 * Reads again the pauses and the rates set at run time when a control
 * request may have lapsed before this node took it (the heartbeat says
 * requests were posted to it, or that its lease had lapsed, when none
 * could be): the request is only the news, the broker
 * holds the setting. A read that a pause or rate request overtook (the
 * request may be newer) is dropped, and so is a failed one: the next beat
 * reads again. The ids revoked since the last read come with it (a revoke
 * request lapses as the others do): those only add, so they are handed on
 * whatever overtook the read.
 */
export class SettingsResync {
  /** Pause, resume and rate-limit requests followed so far. */
  private followed = 0;
  private reading: Promise<void> | undefined;
  /** The last read failed or was overtaken: the next beat reads again, flagged or not. */
  private again = false;
  /** The latest revoke read (broker's epoch ms): the next read asks for those from there on. */
  private revokedSince = 0;

  constructor(
    private readonly broker: SettingsSource,
    private readonly apply: (settings: RememberedSettings) => void,
    private readonly revoked: (jobs: readonly RevokedJob[]) => void,
    private readonly log: Logger,
  ) {}

  /** The revoked ids the node read whole (when it registers): a later read needs only those after them. */
  readRevoked(jobs: readonly RevokedJob[]): void {
    for (const job of jobs) this.revokedSince = Math.max(this.revokedSince, job.revokedAt);
  }

  /** A pause, resume or rate-limit request was followed: a read under way may be older. */
  changed(): void {
    this.followed++;
  }

  /** After each beat: `posted`, requests were posted to this node since the last one (or its lease lapsed). */
  beat(posted: boolean): Promise<void> {
    // A read under way may have left before what this beat was told of.
    if (this.reading !== undefined) {
      if (posted) this.again = true;
      return this.reading;
    }
    if (!posted && !this.again) return Promise.resolve();
    this.again = false;
    this.reading = this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(): Promise<void> {
    const before = this.followed;
    try {
      const [pauses, rates, revoked] = await Promise.all([
        this.broker.listPaused(),
        this.broker.rateLimits(),
        this.broker.listRevoked(this.revokedSince),
      ]);
      this.readRevoked(revoked);
      if (revoked.length > 0) this.revoked(revoked);
      if (before === this.followed) this.apply({ pauses, rates });
      else this.again = true;
    } catch (err) {
      this.again = true;
      this.log.warn(
        { err },
        'could not read the paused queues, rate limits and revokes again after control requests were posted to this node; the next heartbeat tries again',
      );
    }
  }
}
