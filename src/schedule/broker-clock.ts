/**
 * The broker's clock as a node reads it between the broker's replies. Each
 * reply tells the broker's now (as its skew from this process's wall clock,
 * taken as the reply came: never ahead of the truth); from there it runs on
 * by whichever of the wall clock and the monotonic clock went further. The
 * wall clock alone can be stepped back (NTP or chrony correcting a clock
 * that ran ahead): the node would sleep past ticks already due, asking the
 * broker nothing, for as long as the step. The monotonic clock alone stands
 * still while the host sleeps (a suspended VM or laptop), with the same
 * effect. A reading ahead of the broker costs one claim that the broker
 * answers 'early' with its own now.
 */
export class BrokerClock {
  private skew = 0;
  private brokerAt = Date.now();
  private heardAt = performance.now();

  /** A reply came: the broker's clock minus this process's wall clock, as it came. */
  heard(skew: number): void {
    this.skew = skew;
    this.brokerAt = Date.now() + skew;
    this.heardAt = performance.now();
  }

  /** The broker's now (epoch ms), as far as this process can tell. */
  now(): number {
    return Math.max(Date.now() + this.skew, this.brokerAt + (performance.now() - this.heardAt));
  }
}
