/**
 * Counts unexpected child deaths in a sliding window, so that a task module
 * that cannot load fails the pool with a clear error instead of fork-looping.
 */
export class RestartLimiter {
  private deaths: number[] = [];

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  /** Records a death; true when the limit is now exceeded. */
  record(now = Date.now()): boolean {
    this.deaths.push(now);
    const since = now - this.windowMs;
    while (this.deaths.length > 0 && (this.deaths[0] as number) < since) this.deaths.shift();
    return this.deaths.length > this.max;
  }

  get recent(): number {
    return this.deaths.length;
  }
}
