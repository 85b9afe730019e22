import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { HttpListener } from './http-listener.js';

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
  private readonly listener: HttpListener;

  constructor(
    private readonly routes: ReadonlyMap<string, EndpointHandler>,
    private readonly log: Logger,
  ) {
    this.listener = new HttpListener((req, res, url) => void this.answer(req, res, url.pathname), log);
  }

  /** Binds host:port (0: any free port); rejects with EndpointError naming the address (in use, not allowed). */
  listen(host: string, port: number): Promise<void> {
    return this.listener.listen(host, port, [...this.routes.keys()]);
  }

  /** `http://host:port` once bound. */
  get url(): string | undefined {
    return this.listener.url;
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  private async answer(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
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
