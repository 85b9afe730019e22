import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { EndpointError } from '../errors.js';

/**
 * Connections open at once; one past it is closed as it comes. A metrics or
 * health port bound to a network address faces whoever can reach it, and
 * each socket is a file descriptor of the node's own process, which its
 * children's pipes and its Redis connections need too.
 */
export const MAX_CONNECTIONS = 128;
/**
 * A request's headers, and then its whole body, must arrive within this
 * (Node's defaults: 60 s and 300 s), or it is answered 408 and closed: a
 * client that trickles them (slowloris) holds a connection no longer. A
 * response may take as long as it needs (the dashboard's event stream).
 */
export const REQUEST_TIMEOUT_MS = 10_000;
/** How often Node looks for requests past REQUEST_TIMEOUT_MS (its default, 30 s, would triple it). */
const TIMEOUT_CHECK_MS = 1_000;
/** At most one warning per this long about connections dropped at MAX_CONNECTIONS. */
const DROP_WARN_MS = 60_000;

/** What a server on an HttpListener does with a request: `url` is its target, parsed (a path and a query). */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

/**
 * Node's http server on one address, as a node's endpoints and the
 * dashboard use it: listen() rejects with EndpointError naming the address
 * and what it was to serve; close() also ends open connections, so a
 * scraper's or a browser's keep-alive socket never holds the process open.
 */
export class HttpListener {
  private readonly server: Server;
  private bound: AddressInfo | undefined;
  /** Connections dropped at MAX_CONNECTIONS since the last warning, and when that was. */
  private dropped = 0;
  private warnedAt = -Infinity;

  constructor(
    handler: RequestHandler,
    private readonly log: Logger,
  ) {
    this.server = createServer(
      {
        headersTimeout: REQUEST_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        connectionsCheckingInterval: TIMEOUT_CHECK_MS,
      },
      (req, res) => {
        const url = requestUrl(req.url);
        if (url === undefined) return badTarget(res, req.url ?? '');
        handler(req, res, url);
      },
    );
    this.server.maxConnections = MAX_CONNECTIONS;
    // Probes share the cap: a port that drops connections must say so, once a minute at most.
    this.server.on('drop', (data?: { remoteAddress?: string }) => {
      this.dropped++;
      const now = performance.now();
      if (now - this.warnedAt < DROP_WARN_MS) return;
      this.log.warn(
        { dropped: this.dropped, maxConnections: MAX_CONNECTIONS, remoteAddress: data?.remoteAddress },
        `${MAX_CONNECTIONS} connections are open already: ${this.dropped} more closed as they came (health probes share this cap)`,
      );
      this.dropped = 0;
      this.warnedAt = now;
    });
    // Probes, scrapers and pages reconnect often: idle sockets must not linger.
    this.server.keepAliveTimeout = 5_000;
  }

  /** Binds host:port (0: any free port); rejects with EndpointError naming the address (in use, not allowed) and `serves`. */
  listen(host: string, port: number, serves: readonly string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => reject(new EndpointError(host, port, [...serves], err));
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        this.bound = this.server.address() as AddressInfo;
        this.server.on('error', (err) => this.log.error({ err, serves }, 'http server error'));
        resolve();
      });
    });
  }

  /** `http://host:port` once bound. */
  get url(): string | undefined {
    if (this.bound === undefined) return undefined;
    const host = this.bound.family === 'IPv6' ? `[${this.bound.address}]` : this.bound.address;
    return `http://${host}:${this.bound.port}`;
  }

  close(): Promise<void> {
    if (this.bound === undefined) return Promise.resolve();
    this.bound = undefined;
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** The base a request's target (a path, or rarely a whole URL) is read against. */
const BASE = 'http://listener';

/**
 * A request's target as a URL, or undefined when it is none: Node's parser
 * lets through targets such as `//` or `//:x/` that `new URL` throws on, and
 * a throw in a request handler would take the whole process down.
 */
function requestUrl(target: string | undefined): URL | undefined {
  try {
    return new URL(target ?? '/', BASE);
  } catch {
    return undefined;
  }
}

function badTarget(res: ServerResponse, target: string): void {
  res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'close' });
  res.end(`bad request target: ${JSON.stringify(target)} (a path such as /)\n`);
}
