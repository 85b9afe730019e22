import type { Logger } from 'pino';
import type { Endpoint } from '../worker-options.js';
import { EndpointServer, type EndpointHandler, type EndpointReply } from './endpoint-server.js';
import type { HealthReport } from './node-health.js';
import { NodeMetrics, type MetricsSource } from './node-metrics.js';

/** What the endpoints read from the node. */
export interface EndpointsSource extends MetricsSource {
  liveness(): HealthReport;
  readiness(): HealthReport;
}

/** The URLs a node serves (`Worker.endpoints`). */
export interface EndpointUrls {
  /** `http://host:port/metrics`, when metrics are served. */
  metrics?: string;
  /** `http://host:port` of /healthz and /readyz, when health probes are served. */
  health?: string;
}

/**
 * A node's HTTP endpoints: /metrics on `metricsPort`, /healthz and /readyz on
 * `healthPort`, one server when the two ports are the same.
 */
export class NodeEndpoints {
  private constructor(
    readonly metrics: NodeMetrics | undefined,
    private readonly servers: { server: EndpointServer; paths: string[] }[],
  ) {}

  /** Binds what is asked for; rejects with EndpointError (nothing left listening) when a port cannot be bound. */
  static async open(
    where: { metrics: Endpoint | undefined; health: Endpoint | undefined },
    source: EndpointsSource,
    log: Logger,
  ): Promise<NodeEndpoints> {
    const metrics = where.metrics === undefined ? undefined : await NodeMetrics.create(source);
    const plans: { at: Endpoint; routes: Map<string, EndpointHandler> }[] = [];
    const planFor = (at: Endpoint): Map<string, EndpointHandler> => {
      // Port 0 asks for a free port each: two of them are two servers.
      const same = at.port === 0 ? undefined : plans.find((p) => p.at.port === at.port);
      if (same !== undefined) return same.routes;
      const routes = new Map<string, EndpointHandler>();
      plans.push({ at, routes });
      return routes;
    };
    if (metrics !== undefined && where.metrics !== undefined)
      planFor(where.metrics).set('/metrics', async () => {
        const { body, contentType } = await metrics.scrape();
        return { status: 200, contentType, body };
      });
    if (where.health !== undefined) {
      const routes = planFor(where.health);
      routes.set('/healthz', () => probe(source.liveness()));
      routes.set('/readyz', () => probe(source.readiness()));
    }
    const servers: { server: EndpointServer; paths: string[] }[] = [];
    try {
      for (const { at, routes } of plans) {
        const server = new EndpointServer(routes, log);
        await server.listen(at.host, at.port);
        servers.push({ server, paths: [...routes.keys()] });
      }
    } catch (err) {
      await Promise.all(servers.map((s) => s.server.close()));
      throw err;
    }
    const endpoints = new NodeEndpoints(metrics, servers);
    for (const { server, paths } of servers)
      log.info({ url: server.url, paths }, `serving ${paths.join(', ')} at ${server.url}`);
    return endpoints;
  }

  get urls(): EndpointUrls {
    const urls: EndpointUrls = {};
    for (const { server, paths } of this.servers) {
      if (paths.includes('/metrics')) urls.metrics = `${server.url}/metrics`;
      if (paths.includes('/healthz')) urls.health = server.url;
    }
    return urls;
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.server.close()));
  }
}

function probe(report: HealthReport): EndpointReply {
  return {
    status: report.ok ? 200 : 503,
    contentType: 'application/json; charset=utf-8',
    body: `${JSON.stringify({ status: report.ok ? 'ok' : 'failing', checks: report.checks })}\n`,
  };
}
