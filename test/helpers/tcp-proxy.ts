/**
 * A TCP proxy on loopback between a client and a real redis-server, which a
 * test can use to break the network the way it breaks in production: cut
 * every connection, refuse or hold new ones, or swallow the server's reply
 * to a chosen command and then cut that connection (so a command Redis ran,
 * such as a BLMPOP that popped ids, has its reply lost). Real sockets only:
 * the bytes are forwarded untouched.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

interface Link {
  client: Socket;
  server: Socket;
  /** Requests matching a watched pattern that are still waiting for a reply. */
  pending: Set<string>;
  /** Set by swallowReplyTo: the next server bytes are dropped and the link cut. */
  swallow: (() => void) | undefined;
}

export type NewConnectionMode = 'forward' | 'refuse' | 'hold';

export class TcpProxy {
  private readonly links = new Set<Link>();
  /** Accepted, not forwarded yet, with what each sent meanwhile. */
  private readonly held = new Map<Socket, Buffer[]>();
  private mode: NewConnectionMode = 'forward';
  private readonly sent = new Map<string, number>();
  private readonly answered = new Map<string, number>();
  private readonly watched = new Set<string>();
  private armed: { pattern: string; done: () => void } | undefined;
  /** Connections accepted so far (forwarded, refused or held). */
  accepted = 0;
  private readonly acceptWaiters: (() => void)[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  /** A proxy listening on a free loopback port, forwarding to `targetUrl` (redis://host:port). */
  static async start(targetUrl: string): Promise<TcpProxy> {
    const u = new URL(targetUrl);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
    return new TcpProxy(server, address.port, { host: u.hostname, port: Number(u.port) });
  }

  /** The URL a client uses to go through the proxy. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Connections open through the proxy now (held ones included). */
  get open(): number {
    return this.links.size + this.held.size;
  }

  /**
   * What happens to new connections: forwarded; refused (accepted and closed
   * at once, as a server that is down); held (accepted, nothing forwarded,
   * until the mode changes: a connect that is in progress).
   */
  setMode(mode: NewConnectionMode): void {
    this.mode = mode;
    if (mode === 'hold') return;
    const held = [...this.held];
    this.held.clear();
    for (const [client, early] of held) {
      client.removeAllListeners('data');
      client.removeAllListeners('close');
      if (mode === 'refuse') client.destroy();
      else this.forward(client, early);
    }
  }

  /** Cuts every open connection (both sides; the client's with a reset). */
  dropAll(): void {
    for (const link of [...this.links]) this.cut(link);
    for (const client of this.held.keys()) client.destroy();
    this.held.clear();
  }

  /**
   * Counts requests whose bytes contain `pattern` (e.g. "BLMPOP"), and their
   * replies: see sent() and answered().
   */
  watch(pattern: string): void {
    this.watched.add(pattern);
  }

  /** Requests seen containing a watched `pattern`. */
  sentCount(pattern: string): number {
    return this.sent.get(pattern) ?? 0;
  }

  /** Requests containing a watched `pattern` whose connection has since received reply bytes. */
  answeredCount(pattern: string): number {
    return this.answered.get(pattern) ?? 0;
  }

  /**
   * The next request containing `pattern` (on any connection) is forwarded,
   * but the server's reply to it is dropped and that connection cut: Redis
   * ran the command, the client never hears of it. Resolves once done.
   */
  swallowReplyTo(pattern: string): Promise<void> {
    return new Promise((resolve) => (this.armed = { pattern, done: resolve }));
  }

  async close(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Resolves when the next connection is accepted (and refused, held or forwarded). */
  nextAccept(): Promise<void> {
    return new Promise((resolve) => this.acceptWaiters.push(resolve));
  }

  private accept(client: Socket): void {
    this.accepted++;
    for (const wake of this.acceptWaiters.splice(0)) queueMicrotask(wake);
    client.on('error', () => undefined);
    if (this.mode === 'refuse') client.destroy();
    else if (this.mode === 'hold') {
      // Read (and keep) what it sends, so a client that gives up is seen to close.
      const early: Buffer[] = [];
      this.held.set(client, early);
      client.on('data', (chunk: Buffer) => early.push(chunk));
      client.on('close', () => this.held.delete(client));
    } else this.forward(client, []);
  }

  private forward(client: Socket, early: Buffer[]): void {
    const server = connect(this.target.port, this.target.host);
    for (const chunk of early) server.write(chunk);
    server.on('error', () => undefined);
    const link: Link = { client, server, pending: new Set(), swallow: undefined };
    this.links.add(link);
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      for (const pattern of this.watched) {
        if (!text.includes(pattern)) continue;
        this.sent.set(pattern, this.sentCount(pattern) + 1);
        link.pending.add(pattern);
      }
      const armed = this.armed;
      if (armed !== undefined && text.includes(armed.pattern)) {
        this.armed = undefined;
        link.swallow = armed.done;
      }
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      if (link.swallow !== undefined) {
        const done = link.swallow;
        link.swallow = undefined;
        this.cut(link);
        done();
        return;
      }
      for (const pattern of link.pending) this.answered.set(pattern, this.answeredCount(pattern) + 1);
      link.pending.clear();
      client.write(chunk);
    });
    const end = (): void => this.cut(link);
    client.on('close', end);
    server.on('close', end);
  }

  /** Ends both sides; the client's with a reset (ECONNRESET), as a network failure does. */
  private cut(link: Link): void {
    if (!this.links.delete(link)) return;
    link.client.resetAndDestroy();
    link.server.destroy();
  }
}
