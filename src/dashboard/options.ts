import type { Logger } from 'pino';
import type { Bad } from '../util/units.js';

/** How `prefork dashboard` serves: where, to whom, and what it may do. */
export interface DashboardOptions {
  /**
   * Port to listen on (0: any free port).
   * @defaultValue 5555
   */
  port?: number;
  /**
   * Address to bind: only this machine can reach the page unless told otherwise.
   * @defaultValue `"127.0.0.1"`
   */
  host?: string;
  /**
   * A token every request must carry (`Authorization: Bearer <token>`, or
   * the cookie the page sets after `/?token=<token>`); not empty.
   * @defaultValue none: no token asked
   */
  authToken?: string;
  /**
   * Show only: every action (retry, delete, revoke, pause, resume, grow,
   * shrink, autoscale, shutdown) is refused with 403 and the page has no buttons.
   * @defaultValue false
   */
  readOnly?: boolean;
  /**
   * How often the queue counts and the nodes' stats are read (ms), for the
   * page and its charts. Each read is one bounded call per queue and one
   * control request to the nodes, whatever the queues hold.
   * @defaultValue 2000
   */
  sampleInterval?: number;
  /**
   * How long a node has to answer a control request, the stats or an action (ms).
   * @defaultValue 5000
   */
  controlTimeout?: number;
  /**
   * A pino logger.
   * @defaultValue the CLI's logger
   */
  logger?: Logger;
}

export const DASHBOARD_DEFAULTS = {
  port: 5555,
  host: '127.0.0.1',
  sampleInterval: 2_000,
  controlTimeout: 5_000,
} as const;

/** Samples kept for the charts: 10 minutes at the default interval. */
export const HISTORY_SAMPLES = 300;

/**
 * An auth token must not be empty: an empty one would read as "token
 * required" while `/?token=` opens the page, and would silence the warning
 * for a dashboard bound beyond this machine. An empty variable is how a
 * secret that did not reach the environment looks.
 */
export function checkAuthToken(option: string, value: string | undefined, bad: Bad): string | undefined {
  if (value === '') bad(option, value, 'a non-empty token');
  return value;
}
