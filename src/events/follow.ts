import type { Logger } from 'pino';
import type { BrokerEvents, EventPage } from '../broker/types.js';
import { OptionError } from '../errors.js';
import { checkKnownKeys, throwOptionError } from '../job-option-checks.js';
import { checkInteger } from '../util/units.js';
import { isRecord } from '../util/is-record.js';
import { retryDelay, type BackoffPolicy } from '../util/backoff.js';
import { abortableSleep } from '../util/sleep.js';
import { matches, NODE_EVENT_TYPES, type EventFilter, type NodeEvent } from './node-event.js';

/** What `client.events()` and `prefork events` read. */
export interface EventsOptions extends EventFilter {
  /**
   * Start with the last this many events (before filtering) already in the stream.
   * @defaultValue 0: only events that come after the call
   */
  recent?: number;
  /**
   * Wait for new events; false ends after the recent ones.
   * @defaultValue true
   */
  follow?: boolean;
  /**
   * Ends the iteration (as does closing the client).
   * @defaultValue none: it ends with the client
   */
  signal?: AbortSignal;
}

/** A blocking read of the stream waits at most this long before it is sent again. */
const READ_WAIT_MS = 30_000;
/** Pauses between failed reads: 0.1 s doubling to 5 s. */
const READ_RETRY: BackoffPolicy = { delay: 100, cap: 5_000 };

const EVENTS_KEYS: ReadonlySet<string> = new Set(['recent', 'follow', 'signal', 'task', 'node', 'types']);

/**
 * Throws an OptionError naming what is wrong. An unknown key is refused: a
 * misspelt filter (`tasks`) would otherwise be ignored and every event of
 * every task followed, with nothing saying so; and a `follow` of "false"
 * (a string) would follow for ever.
 */
export function checkEventsOptions(options: EventsOptions): void {
  const given: unknown = options;
  if (!isRecord(given))
    throw new OptionError('options', options, `an object: { ${[...EVENTS_KEYS].map((k) => `${k}?`).join(', ')} }`);
  checkKnownKeys(options, EVENTS_KEYS, 'events() option', throwOptionError);
  const { recent, types, follow, signal } = options;
  if (recent !== undefined) checkInteger('recent', recent, throwOptionError, 0);
  if (follow !== undefined && typeof follow !== 'boolean') throw new OptionError('follow', follow, 'true or false');
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new OptionError('signal', signal, 'an AbortSignal');
  const known: readonly unknown[] = NODE_EVENT_TYPES;
  if (types !== undefined && (!Array.isArray(types) || (types as unknown[]).some((t) => !known.includes(t))))
    throw new OptionError('types', types, `an array of ${NODE_EVENT_TYPES.join(', ')}`);
  for (const name of ['task', 'node'] as const) {
    const v = options[name];
    if (v !== undefined && typeof v !== 'string') throw new OptionError(name, v, 'a string');
  }
}

/**
 * The events of every node, oldest first: the `recent` ones, then (when
 * following) each as it comes. A read that fails (the broker away), the
 * first one included, is logged once and tried again with a growing pause;
 * the position is kept, so nothing still in the stream is skipped. Without
 * `follow`, the first read's failure is thrown.
 */
export async function* followEvents(
  broker: BrokerEvents,
  options: EventsOptions,
  closing: AbortSignal,
  log: Logger,
): AsyncGenerator<NodeEvent> {
  checkEventsOptions(options);
  const signal = options.signal === undefined ? closing : AbortSignal.any([closing, options.signal]);
  const follow = options.follow !== false;
  let failures = 0;
  /** The page `read` gets, or undefined when it failed (logged, and waited for before the next try). */
  const attempt = async (read: () => Promise<EventPage>): Promise<EventPage | undefined> => {
    try {
      const page = await read();
      if (failures > 0) log.info({ failures }, 'reading the events again');
      failures = 0;
      return page;
    } catch (err) {
      if (!follow) throw err;
      if (signal.aborted) return undefined;
      if (failures === 0) log.warn({ err }, 'reading the events failed; retrying');
      await abortableSleep(retryDelay(failures++, READ_RETRY), signal);
      return undefined;
    }
  };
  let first: EventPage | undefined;
  // A dashboard follows for days: a broker away when it starts must not end its feed for good.
  do first = await attempt(() => broker.recentEvents(options.recent ?? 0));
  while (first === undefined && !signal.aborted);
  if (first === undefined) return;
  for (const e of first.events) if (matches(e, options)) yield e;
  let position = first.position;
  while (follow && !signal.aborted) {
    const page = await attempt(() => broker.readEvents(position, READ_WAIT_MS, signal));
    if (page === undefined) continue;
    position = page.position;
    for (const e of page.events) if (matches(e, options)) yield e;
  }
}
