import type { Logger } from 'pino';
import type { BrokerAdmin, BrokerConnection, BrokerEvents, BrokerPauses } from '../broker/types.js';
import type { NodeAsker } from '../cli/control-request.js';
import type { Client } from '../client.js';
import { followEvents } from '../events/follow.js';
import { ACTIONS, type ActionContext } from './actions.js';
import { loadAssets } from './assets.js';
import { jobPage, oneJob } from './data.js';
import { EventTally } from './event-tally.js';
import { RequestGuard } from './guard.js';
import { onlyParams } from './request-input.js';
import { DashboardServer, type JsonReply } from './http-server.js';
import { checkAuthToken, DASHBOARD_DEFAULTS, HISTORY_SAMPLES, type DashboardOptions } from './options.js';
import { throwOptionError } from '../job-option-checks.js';
import { Sampler } from './sampler.js';
import { SseHub } from './sse.js';

/** Recent events read at start: the runtimes and job histories have something to show at once. */
const RECENT_EVENTS = 1_000;

/** The broker roles the dashboard reads and acts through. */
export type DashboardBroker = BrokerConnection & NodeAsker & BrokerPauses & BrokerAdmin & BrokerEvents;

/** A running dashboard. */
export interface Dashboard {
  /** `http://host:port`. */
  readonly url: string;
  /** Stops serving and sampling (the broker and the client stay open: they are the caller's). */
  close(): Promise<void>;
}

/**
 * Serves the dashboard: one page, its JSON routes, server-sent events with
 * a snapshot per sample, and the actions (unless read-only). Every number
 * comes from the functions the CLI's commands use: the queue counts of
 * `inspect queues`, the stats of `inspect stats`, the pages of `prefork
 * jobs`, the record of `prefork result`, the events of `prefork events`.
 */
export async function startDashboard(
  broker: DashboardBroker,
  client: Pick<Client, 'getState' | 'revokeMany'>,
  options: DashboardOptions & { logger: Logger },
): Promise<Dashboard> {
  const log = options.logger;
  const intervalMs = options.sampleInterval ?? DASHBOARD_DEFAULTS.sampleInterval;
  const controlTimeoutMs = options.controlTimeout ?? DASHBOARD_DEFAULTS.controlTimeout;
  const readOnly = options.readOnly === true;
  const host = options.host ?? DASHBOARD_DEFAULTS.host;
  const authToken = checkAuthToken('authToken', options.authToken, throwOptionError);
  await broker.connect();

  const stop = new AbortController();
  const hub = new SseHub(log);
  const tally = new EventTally();
  const sampler = new Sampler(
    broker,
    tally,
    { intervalMs, controlTimeoutMs, historySize: HISTORY_SAMPLES },
    (snapshot) => hub.broadcast('snapshot', snapshot),
    log,
  );
  const startedAt = Date.now();
  const following = (async () => {
    for await (const e of followEvents(broker, { recent: RECENT_EVENTS }, stop.signal, log))
      tally.add(e, e.at >= startedAt);
  })().catch((err: unknown) => log.error({ err }, 'following the events stopped'));

  const config = { readOnly, broker: broker.displayUrl };
  const ok = (body: unknown): JsonReply => ({ status: 200, body });
  const ctx: ActionContext = { broker, revoke: (ids, o) => client.revokeMany(ids, o), controlTimeoutMs };
  const server = new DashboardServer(
    {
      get: new Map([
        [
          'overview',
          (params: URLSearchParams) => {
            onlyParams(params, []);
            return Promise.resolve(ok({ config, snapshot: sampler.latest(), history: sampler.history.all() }));
          },
        ],
        ['jobs', async (params: URLSearchParams) => ok(await jobPage(broker, params))],
        [
          'job',
          async (params: URLSearchParams) => {
            const { found, job } = await oneJob(client, tally.trails, params);
            return { status: found ? 200 : 404, body: job };
          },
        ],
      ]),
      actions: new Map(
        [...ACTIONS].map(([name, action]) => [
          name,
          async (body) => {
            const result = await action(ctx, body);
            log.info({ action: name, body, ok: result.ok }, `dashboard: ${name}`);
            // The page shows the effect at once rather than a sample later.
            void sampler.sampleAfter();
            return result;
          },
        ]),
      ),
      stream: {
        hub,
        first: () => {
          const snapshot = sampler.latest();
          return snapshot === undefined ? undefined : { event: 'snapshot', data: snapshot };
        },
      },
      assets: loadAssets(),
    },
    new RequestGuard(authToken, host),
    readOnly,
    log,
  );
  try {
    await sampler.start(stop.signal);
    await server.listen(host, options.port ?? DASHBOARD_DEFAULTS.port);
  } catch (err) {
    stop.abort();
    hub.close();
    await following;
    throw err;
  }
  return {
    url: server.url ?? '',
    async close() {
      stop.abort();
      hub.close();
      await server.close();
      await following;
    },
  };
}
