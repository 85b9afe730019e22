import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { BrokerFullError, BrokerUnavailableError, OptionError, PreforkError } from '../errors.js';
import { HttpListener } from '../observe/http-listener.js';
import { PausedEverywhereError } from '../cli/commands/control-pause.js';
import { NoSuchNodeError } from '../cli/control-request.js';
import { jsonText } from '../cli/json-text.js';
import { UsageError } from '../cli/usage-error.js';
import type { Asset } from './assets.js';
import { TOKEN_COOKIE, type RequestGuard } from './guard.js';
import { parseBody, queryParams, type Body } from './request-input.js';
import type { SseHub } from './sse.js';

/** A GET route's answer: JSON, with a status. */
export interface JsonReply {
  status: number;
  body: unknown;
}

/** What the server serves. */
export interface DashboardRoutes {
  /** GET /api/<name> */
  get: ReadonlyMap<string, (params: URLSearchParams) => Promise<JsonReply>>;
  /** POST /api/actions/<name> with a JSON body. */
  actions: ReadonlyMap<string, (body: Body) => Promise<unknown>>;
  /** GET /api/stream: the server-sent events. */
  stream: { hub: SseHub; first: () => { event: string; data: unknown } | undefined };
  assets: ReadonlyMap<string, Asset>;
}

/** Largest action body read (the page sends a few fields). */
const BODY_MAX = 64 * 1024;

/** An action's body over BODY_MAX bytes: answered 413, the rest is not read and the connection closes. */
class BodyTooLargeError extends PreforkError {
  static override readonly code: string = 'PREFORK_BODY_TOO_LARGE';
  constructor(readonly limit: number) {
    super(`the body is over ${limit} bytes (an action takes a JSON object of a few fields)`);
  }
}

/**
 * The connection closed before an action's body came whole: the asker went
 * away, or trickled it past the listener's request timeout (Node answered
 * 408). Nobody is left to answer and nothing was done: the asker's doing,
 * not the dashboard's failure, so it is logged at debug (anyone who reaches
 * the port could otherwise fill the error log).
 */
class BodyIncompleteError extends PreforkError {
  static override readonly code: string = 'PREFORK_BODY_INCOMPLETE';
  constructor(cause: unknown) {
    super('the connection closed before the body came whole', { cause });
  }
}

/** What every answer carries: the page runs only its own scripts, in no frame, and nothing is cached. */
const SECURITY_HEADERS: [string, string][] = [
  [
    'Content-Security-Policy',
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  ],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cache-Control', 'no-store'],
];

/**
 * The dashboard's HTTP server (Node's http: a page, a few JSON routes and
 * one event stream need nothing more). Every request passes the guard first;
 * actions are refused when read-only; a route that throws answers 400 for
 * bad input (its message names what was wrong) and 500 otherwise (logged).
 */
export class DashboardServer {
  private readonly listener: HttpListener;

  constructor(
    private readonly routes: DashboardRoutes,
    private readonly guard: RequestGuard,
    private readonly readOnly: boolean,
    private readonly log: Logger,
  ) {
    this.listener = new HttpListener((req, res, url) => void this.answer(req, res, url), log);
  }

  /** Binds host:port (0: any free port); rejects with EndpointError naming the address. */
  listen(host: string, port: number): Promise<void> {
    return this.listener.listen(host, port, ['the dashboard']);
  }

  /** `http://host:port` once bound. */
  get url(): string | undefined {
    return this.listener.url;
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  private async answer(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
    const refused = this.guard.check(req, url);
    if (refused !== undefined)
      return url.pathname.startsWith('/api/')
        ? json(res, refused.status, { ok: false, error: refused.message })
        : text(res, refused.status, refused.message);
    try {
      const actionName = url.pathname.startsWith('/api/actions/')
        ? url.pathname.slice('/api/actions/'.length)
        : undefined;
      if (actionName !== undefined && req.method === 'POST') return await this.action(req, res, actionName);
      if (actionName !== undefined && this.routes.actions.has(actionName)) {
        res.setHeader('Allow', 'POST');
        return json(res, 405, {
          ok: false,
          error: `${req.method ?? ''} not allowed on ${url.pathname}: an action is a POST with a JSON body`,
        });
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD');
        return text(res, 405, `${req.method ?? ''} not allowed on ${url.pathname}`);
      }
      if (url.pathname === '/') return this.page(res, url);
      if (url.pathname === '/favicon.ico') return void res.writeHead(204).end();
      if (url.pathname === '/api/stream') return this.routes.stream.hub.add(req, res, this.routes.stream.first());
      const asset = this.routes.assets.get(url.pathname);
      if (asset !== undefined) {
        res.writeHead(200, { 'Content-Type': asset.type });
        return void res.end(req.method === 'HEAD' ? undefined : asset.body);
      }
      const route = url.pathname.startsWith('/api/') ? this.routes.get.get(url.pathname.slice(5)) : undefined;
      if (route === undefined) return text(res, 404, `no such path: ${url.pathname}`);
      const reply = await route(queryParams(url.search));
      json(res, reply.status, reply.body);
    } catch (err) {
      this.failed(res, url.pathname, err);
    }
  }

  /** The page; `/?token=` (the right one) sets the cookie and sends the browser to `/`, so the token leaves the address bar. */
  private page(res: ServerResponse, url: URL): void {
    const given = url.searchParams.get('token');
    if (this.guard.needsToken && given !== null && this.guard.matches(given)) {
      res.setHeader('Set-Cookie', `${TOKEN_COOKIE}=${encodeURIComponent(given)}; HttpOnly; SameSite=Strict; Path=/`);
      res.writeHead(303, { Location: '/' });
      return void res.end();
    }
    const index = this.routes.assets.get('/assets/index.html');
    res.writeHead(200, { 'Content-Type': index?.type ?? 'text/html' });
    res.end(index?.body);
  }

  private async action(req: IncomingMessage, res: ServerResponse, name: string): Promise<void> {
    const action = this.routes.actions.get(name);
    if (action === undefined)
      return json(res, 404, {
        ok: false,
        error: `no such action: ${name} (${[...this.routes.actions.keys()].join(', ')})`,
      });
    if (this.readOnly)
      return json(res, 403, { ok: false, error: `the dashboard is read-only (--read-only): ${name} refused` });
    const body = parseBody(await readBody(req, res));
    const result = await action(body);
    json(res, 200, result);
  }

  private failed(res: ServerResponse, path: string, err: unknown): void {
    if (err instanceof BodyIncompleteError) {
      this.log.debug({ err, path }, `dashboard: ${path} ended before its body came whole: nothing done`);
      return void res.destroy();
    }
    if (res.headersSent) return void res.end();
    const status = statusOf(err);
    if (status === 500) this.log.error({ err, path }, `dashboard: ${path} failed`);
    json(res, status, {
      ok: false,
      error: status === 500 ? `${path} failed: see the dashboard's log` : (err as Error).message,
    });
  }
}

/**
 * Bad input is the asker's (400); a node or a pause that is not there is a
 * conflict with the cluster's state (404, 409); a Redis that is away, silent
 * or full is the dashboard's own trouble, and passing (503, its message
 * naming the broker and what was not done).
 */
function statusOf(err: unknown): number {
  if (err instanceof BrokerUnavailableError || err instanceof BrokerFullError) return 503;
  if (err instanceof OptionError || err instanceof UsageError) return 400;
  if (err instanceof BodyTooLargeError) return 413;
  if (err instanceof NoSuchNodeError) return 404;
  if (err instanceof PausedEverywhereError) return 409;
  return 500;
}

/**
 * An action's body, refused past BODY_MAX bytes (by its Content-Length, or
 * as it arrives when it has none): the answer then says so and closes the
 * connection, and what is left is read into nothing. Destroying the request
 * instead would cut the socket before any answer.
 */
function readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer> {
  const tooLarge = (): BodyTooLargeError => {
    res.setHeader('Connection', 'close');
    req.removeAllListeners('data');
    req.resume();
    return new BodyTooLargeError(BODY_MAX);
  };
  if (Number(req.headers['content-length'] ?? 0) > BODY_MAX) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > BODY_MAX) reject(tooLarge());
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', (err) => reject(new BodyIncompleteError(err)));
  });
}

/** A job's value or progress may hold what JSON has no type for (a BigInt): written as `prefork result --json` does. */
function json(res: ServerResponse, status: number, body: unknown): void {
  const text = jsonText(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(text);
}

function text(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
}
