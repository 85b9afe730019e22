/** What a broker call of a node's loop (a fetch, a heartbeat) failed with: its message, and whether the broker refused it (rather than being away). */
export interface BrokerFailure {
  message: string;
  refused: boolean;
}

/** What a node's health is judged from (Worker.health() gathers it). */
export interface HealthInputs {
  /** The Worker's lifecycle state. */
  state: 'created' | 'connecting' | 'running' | 'stopping' | 'stopped';
  /** Set when the pool failed or the Consumer crashed. */
  failure: string | undefined;
  consumer: {
    running: boolean;
    stuckForMs: number;
    /** Ms since a broker call of the fetch loop last came back (answered or failed). */
    returnedAgoMs: number;
    brokerFailures: number;
    lastFailure?: BrokerFailure | undefined;
  };
  heartbeat: {
    running: boolean;
    stuckForMs: number;
    /** Ms since the last beat ended (answered or failed). */
    endedAgoMs: number;
    /** Ms since the broker last answered a beat, once past the bound a reply is due in (else 0). */
    silentForMs: number;
    failures: number;
    lastFailure?: BrokerFailure | undefined;
  };
  /** Ms since the node's lease ran out unconfirmed (0 while it holds). */
  leaseLapsedMs: number;
  /** True while the node re-registers after losing its lease. */
  fencing: boolean;
}

/** One probe's verdict, with a line per check ('ok' or what is wrong): the body of /healthz and /readyz. */
export interface HealthReport {
  /** Every check is 'ok'. */
  ok: boolean;
  /** Check name -> 'ok', or what is wrong. */
  checks: Record<string, string>;
}

/**
 * Alive (/healthz): the pool has not failed, and while the node runs, its
 * fetch loop and its heartbeat are turning. A loop is stuck when a call of
 * it never came back while the other loop's calls did come back since: the
 * fault is this process's, and a restart mends it. When neither comes back,
 * Redis answers no one (frozen, a paused VM, a command that holds it): a
 * restart would not bring it back, and would cut short every running job of
 * every node at once, so the node stays alive and is not ready (readiness).
 * A node starting or stopping is alive: a liveness probe must not kill a
 * node that is finishing its jobs.
 */
export function liveness(h: HealthInputs): HealthReport {
  const checks: Record<string, string> = {};
  checks.pool = h.failure === undefined ? 'ok' : `failed: ${h.failure}`;
  if (h.state === 'running') {
    const { consumer, heartbeat } = h;
    checks.consumer = !consumer.running
      ? 'the fetch loop has ended'
      : consumer.stuckForMs > 0 && heartbeat.endedAgoMs < consumer.stuckForMs
        ? `the fetch loop is stuck: a broker call is ${Math.round(consumer.stuckForMs)} ms past its deadline, while the heartbeat's come back`
        : 'ok';
    // A fetch loop waiting for room makes no call: no evidence either way, and the lease's lapse shows in readiness.
    checks.heartbeat = !heartbeat.running
      ? 'the heartbeat has stopped'
      : heartbeat.stuckForMs > 0 && consumer.returnedAgoMs < heartbeat.stuckForMs
        ? `the heartbeat is stuck: no beat ended for ${Math.round(heartbeat.stuckForMs)} ms past the lease, while the fetch loop's calls come back`
        : 'ok';
  }
  return report(checks);
}

/**
 * Ready (/readyz): alive, running (not starting or stopping), holding its
 * lease (not fenced), and reaching the broker (the last heartbeat and the
 * last fetch did not fail, and the broker answered a heartbeat lately: a
 * frozen Redis fails no call).
 */
export function readiness(h: HealthInputs): HealthReport {
  const live = liveness(h);
  const checks: Record<string, string> = { ...live.checks };
  checks.state = h.state === 'running' ? 'ok' : h.state;
  if (h.state !== 'running') return report(checks);
  checks.lease = h.fencing
    ? 'fenced: re-registering'
    : h.leaseLapsedMs > 0
      ? `not confirmed for ${Math.round(h.leaseLapsedMs)} ms past its end`
      : 'ok';
  checks.broker = brokerCheck(h);
  return report(checks);
}

/**
 * 'ok', or how the node's calls to the broker fail: unreachable (away, timing
 * out, or leaving the heartbeat unanswered) or refusing (it answers, with an error it would give again: e.g. a
 * key another program wrote over), with the last failure's message.
 */
function brokerCheck(h: HealthInputs): string {
  const { consumer, heartbeat } = h;
  const failing = Math.max(consumer.brokerFailures, heartbeat.failures);
  if (failing === 0)
    return heartbeat.silentForMs > 0
      ? `unreachable: no heartbeat answered for ${Math.round(heartbeat.silentForMs)} ms (Redis frozen, overloaded or cut off)`
      : 'ok';
  const last = consumer.brokerFailures >= heartbeat.failures ? consumer.lastFailure : heartbeat.lastFailure;
  const how = last?.refused === true ? 'refusing' : 'unreachable';
  return `${how}: the last ${failing} calls failed${last === undefined ? '' : ` (${last.message})`}`;
}

function report(checks: Record<string, string>): HealthReport {
  return { ok: Object.values(checks).every((c) => c === 'ok'), checks };
}
