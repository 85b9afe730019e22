/** Options of `client.revoke` and `handle.revoke`; a bad or unknown one throws an OptionError naming it. */
export interface RevokeJobOptions {
  /**
   * Also stop the job if it is running: its `signal` aborts (with a
   * RevokedError), and if it has not ended after `grace` its child is killed
   * and replaced. Jobs queued behind it in that child run elsewhere.
   * @defaultValue false
   */
  terminate?: boolean;
  /**
   * With `terminate`: how long a running job has to end after its signal
   * aborts before its child is killed (ms or "5s").
   * @defaultValue 5000 (5 s)
   */
  grace?: number | string;
}
