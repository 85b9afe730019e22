import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { jsonText } from '../cli/json-text.js';
import { MAX_CONNECTIONS } from '../observe/http-listener.js';

/** A comment line this often keeps proxies and the browser from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

/**
 * Bytes a stream may hold in the dashboard's memory, past what its socket
 * took, when the next frame is due: a browser that keeps up holds none. One
 * that holds more (it stopped reading, or reads slower than the samples
 * come) is dropped: its EventSource reconnects and starts from the latest
 * snapshot, rather than the dashboard buffering for it without end.
 */
const BACKLOG_MAX = 1024 * 1024;

/**
 * Streams open at once; one more is answered 503 (the page asks again
 * later). A stream holds its connection for as long as the page is open,
 * and the server holds MAX_CONNECTIONS: with every one of them a stream,
 * each new connection was closed as it came, so no page loaded and no
 * action reached the dashboard. The rest stay for those.
 */
export const STREAMS_MAX = MAX_CONNECTIONS - 32;
/** Seconds a refused stream is told to wait before it asks again. */
export const STREAM_RETRY_AFTER_S = 10;

const HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-store',
  Connection: 'keep-alive',
};

/** The browsers following the page's server-sent events: each sample is sent to all of them. */
export class SseHub {
  private readonly clients = new Set<ServerResponse>();
  private readonly keepalive: NodeJS.Timeout;
  /** Streams refused since the last warning, and when that was (one a minute at most). */
  private refused = 0;
  private warnedAt = -Infinity;

  constructor(private readonly log: Logger) {
    this.keepalive = setInterval(() => {
      for (const res of this.clients) this.send(res, ': keepalive\n\n');
    }, KEEPALIVE_MS);
    this.keepalive.unref();
  }

  /**
   * Starts a stream on `res`, with `first` as its first event. A HEAD
   * request gets the stream's headers and its end: a response to HEAD has
   * no body, so a stream kept open would never send even the headers.
   */
  add(req: IncomingMessage, res: ServerResponse, first: { event: string; data: unknown } | undefined): void {
    if (req.method === 'HEAD') return void res.writeHead(200, HEADERS).end();
    if (this.clients.size >= STREAMS_MAX) return this.refuse(res);
    res.writeHead(200, HEADERS);
    res.write('retry: 2000\n\n');
    if (first !== undefined) res.write(frame(first.event, first.data));
    this.clients.add(res);
    res.on('close', () => this.clients.delete(res));
  }

  /** Answers 503 and closes the connection: kept alive, it would hold a place the pages and actions need. */
  private refuse(res: ServerResponse): void {
    this.refused++;
    const now = performance.now();
    if (now - this.warnedAt >= 60_000) {
      this.log.warn(
        { streams: STREAMS_MAX, refused: this.refused },
        `${STREAMS_MAX} pages follow the dashboard already: ${this.refused} more refused their live updates`,
      );
      this.refused = 0;
      this.warnedAt = now;
    }
    res.writeHead(503, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Retry-After': String(STREAM_RETRY_AFTER_S),
      Connection: 'close',
    });
    res.end(`${STREAMS_MAX} event streams are open already: try again in ${STREAM_RETRY_AFTER_S} s\n`);
  }

  broadcast(event: string, data: unknown): void {
    if (this.clients.size === 0) return;
    const text = frame(event, data);
    for (const res of this.clients) this.send(res, text);
  }

  private send(res: ServerResponse, text: string): void {
    if (res.writableLength <= BACKLOG_MAX) return void res.write(text);
    this.clients.delete(res);
    res.destroy();
  }

  close(): void {
    clearInterval(this.keepalive);
    for (const res of this.clients) res.end();
    this.clients.clear();
  }
}

/** One event: JSON on a single data line (JSON.stringify, under jsonText, never emits a raw newline). */
function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${jsonText(data)}\n\n`;
}
