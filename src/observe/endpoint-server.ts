import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { EndpointError } from '../errors.js';

/** What a path answers: a status, a content type and a body. */
export interface EndpointReply {
  status: number;
  contentType: string;
  body: string;
}

export type EndpointHandler = () => EndpointReply | Promise<EndpointReply>;

/**
 * A small read-only HTTP server for a node's /metrics, /healthz and /readyz:
 * GET (or HEAD) on a known path, 404 elsewhere, 405 for other methods. A
 * handler that throws answers 500 and is logged; nothing it does can stop
 * the node.
 */
export class EndpointServer {
  private readonly server: Server;
  private bound: AddressInfo | undefined;

  constructor(
    private readonly routes: ReadonlyMap<string, EndpointHandler>,
    private readonly log: Logger,
  ) {
    this.server = createServer((req, res) => void this.answer(req, res));
    // Probes and scrapers reconnect often: idle sockets must not hold the process open at stop.
    this.server.keepAliveTimeout = 5_000;
  }

  /** Binds host:port (0: any free port); rejects with EndpointError naming the address (in use, not allowed). */
  listen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void =>
        reject(new EndpointError(host, port, [...this.routes.keys()], err));
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        this.bound = this.server.address() as AddressInfo;
        this.server.on('error', (err) => this.log.error({ err }, 'endpoint server error'));
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

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://endpoint').pathname;
    const handler = this.routes.get(path);
    if (handler === undefined) return send(res, req, notFound(path, this.routes));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return send(res, req, { status: 405, contentType: TEXT, body: `${req.method ?? ''} not allowed: GET ${path}\n` });
    }
    try {
      send(res, req, await handler());
    } catch (err) {
      this.log.error({ err, path }, `endpoint ${path} failed`);
      send(res, req, { status: 500, contentType: TEXT, body: `${path} failed: see the node's log\n` });
    }
  }
}

const TEXT = 'text/plain; charset=utf-8';

function notFound(path: string, routes: ReadonlyMap<string, EndpointHandler>): EndpointReply {
  return {
    status: 404,
    contentType: TEXT,
    body: `no such path: ${path} (this port serves ${[...routes.keys()].join(', ')})\n`,
  };
}

function send(res: ServerResponse, req: IncomingMessage, reply: EndpointReply): void {
  res.statusCode = reply.status;
  res.setHeader('Content-Type', reply.contentType);
  res.setHeader('Cache-Control', 'no-store');
  res.end(req.method === 'HEAD' ? undefined : reply.body);
}
