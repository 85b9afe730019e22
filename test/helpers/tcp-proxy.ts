/**
 * A TCP proxy on loopback between a client and a real redis-server, which a
 * test uses to break the network the way it breaks in production: cut
 * connections, refuse or hold new ones, or swallow a reply of the server and
 * cut that connection (so a command Redis ran, such as a BLMPOP that popped
 * ids, has its reply lost). Real sockets only: the bytes are forwarded
 * untouched. Patterns match the bytes regardless of case.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** How many of a connection's first bytes are kept (its handshake names it: CLIENT SETNAME). */
const OPENING_BYTES = 4096;

interface Link {
  client: Socket;
  server: Socket;
  /** Watched patterns sent on this link whose reply has not come yet. */
  pending: Set<string>;
  opening: string;
}

export type NewConnectionMode = 'forward' | 'refuse' | 'hold';

export class TcpProxy {
  private readonly links = new Set<Link>();
  /** Accepted, not forwarded yet, with what each sent meanwhile. */
  private readonly held = new Map<Socket, Buffer[]>();
  private mode: NewConnectionMode = 'forward';
  private readonly watched = new Set<string>();
  private readonly sent = new Map<string, number>();
  private readonly answered = new Map<string, number>();
  private swallow: { text: string; done: () => void } | undefined;
  /** Replies of the server held back (holdReplies), in order, with their link. */
  private heldReplies: [Link, Buffer][] | undefined;
  /** Start holding replies once a request contains `text` (holdRepliesAfter). */
  private holdAfter: { text: string; done: () => void } | undefined;
  /** Cut the connection of the next request containing `text`, unsent (cutOnRequest). */
  private cutOn: { text: string; then: NewConnectionMode; done: () => void } | undefined;
  private readonly acceptWaiters: (() => void)[] = [];
  /** The side left open of abandoned and silenced connections, closed with the proxy. */
  private readonly abandoned = new Set<Socket>();
  /** Connections accepted so far (forwarded, refused or held). */
  accepted = 0;

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
   * until the mode changes: a connect in progress).
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

  /** Resolves when the next connection is accepted (and refused, held or forwarded). */
  nextAccept(): Promise<void> {
    return new Promise((resolve) => this.acceptWaiters.push(resolve));
  }

  /** Cuts every open connection (both sides; the client's with a reset, as a network failure does). */
  dropAll(): void {
    for (const link of [...this.links]) this.cut(link);
    for (const client of this.held.keys()) client.destroy();
    this.held.clear();
  }

  /** Cuts the open connections whose first bytes contain `pattern` (e.g. a connection name); returns how many. */
  dropWhere(pattern: string): number {
    const links = [...this.links].filter((link) => link.opening.includes(pattern.toLowerCase()));
    for (const link of links) this.cut(link);
    return links.length;
  }

  /**
   * For the connections whose first bytes contain `pattern`: the client's
   * side is cut, Redis's side stays open and what Redis sends on it is
   * dropped, as when a network failure leaves Redis unaware of a dead peer
   * (a block it was running stays in Redis). Returns how many.
   */
  abandonWhere(pattern: string): number {
    return this.leaveHalf(pattern, 'server', (link) => link.client.resetAndDestroy());
  }

  /**
   * The other way round: for the connections whose first bytes contain
   * `pattern`, Redis's side is cut (Redis frees that client, and a block it
   * ran ends) while the client's side stays open and silent, as when a load
   * balancer drops an idle flow: the client never learns, and what it sends
   * goes nowhere. Returns how many.
   */
  silenceWhere(pattern: string): number {
    return this.leaveHalf(pattern, 'client', (link) => {
      // Nor does it answer the client's FIN: a peer gone silent never closes its side (the socket's
      // own 'end' listeners would end it, as a server not made with allowHalfOpen does).
      link.client.removeAllListeners('end');
      link.client.allowHalfOpen = true;
      link.server.destroy();
    });
  }

  /**
   * Unlinks the connections whose first bytes contain `pattern`, keeping
   * the `open` side open with what it sends dropped (closed with the
   * proxy), and lets `end` close the other; returns how many.
   */
  private leaveHalf(pattern: string, open: 'client' | 'server', end: (link: Link) => void): number {
    const links = [...this.links].filter((link) => link.opening.includes(pattern.toLowerCase()));
    for (const link of links) {
      this.links.delete(link);
      const kept = link[open];
      link.client.removeAllListeners('close');
      link.server.removeAllListeners('close');
      kept.removeAllListeners('data');
      kept.on('data', () => undefined);
      this.abandoned.add(kept);
      end(link);
    }
    return links.length;
  }

  /** Counts the requests containing `pattern` (sentCount) and their replies (answeredCount). */
  watch(pattern: string): void {
    this.watched.add(pattern.toLowerCase());
  }

  /** Requests seen containing a watched `pattern`. */
  sentCount(pattern: string): number {
    return this.sent.get(pattern.toLowerCase()) ?? 0;
  }

  /** Requests containing a watched `pattern` whose connection has since received reply bytes. */
  answeredCount(pattern: string): number {
    return this.answered.get(pattern.toLowerCase()) ?? 0;
  }

  /**
   * The next reply bytes of the server that contain `text` (e.g. a job id a
   * BLMPOP popped) are dropped and that connection cut: Redis ran the
   * command, the client never hears of it. Resolves once done.
   */
  swallowReply(text: string): Promise<void> {
    return new Promise((resolve) => (this.swallow = { text: text.toLowerCase(), done: resolve }));
  }

  /**
   * Holds back what the server sends, on every connection, until
   * releaseReplies(): what a client sends meanwhile went out before it had
   * any reply (one round trip, however many commands).
   */
  holdReplies(): void {
    this.heldReplies ??= [];
  }

  /**
   * Holds back what the server sends, as holdReplies(), from the next request
   * containing `pattern` on (its reply included): the client that sent it
   * waits on it, however long the test likes. Resolves once it is held.
   */
  holdRepliesAfter(pattern: string): Promise<void> {
    return new Promise((resolve) => (this.holdAfter = { text: pattern.toLowerCase(), done: resolve }));
  }

  /**
   * The next request containing `text` never reaches the server: its
   * connection is cut instead (a network failure between a client's two
   * calls), and new connections are then handled as `then` says (`refuse`:
   * the client cannot send it again on a new one). Requests sent with it in
   * the same chunk are lost with it. Resolves once done.
   */
  cutOnRequest(text: string, then: NewConnectionMode = 'forward'): Promise<void> {
    return new Promise((resolve) => (this.cutOn = { text: text.toLowerCase(), then, done: resolve }));
  }

  /** Passes on the replies held back, in order, and stops holding. */
  releaseReplies(): void {
    const held = this.heldReplies ?? [];
    this.heldReplies = undefined;
    for (const [link, chunk] of held) if (this.links.has(link)) this.reply(link, chunk);
  }

  async close(): Promise<void> {
    this.dropAll();
    for (const socket of this.abandoned) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
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
    server.on('error', () => undefined);
    for (const chunk of early) server.write(chunk);
    const opening = Buffer.concat(early).toString('latin1').toLowerCase().slice(0, OPENING_BYTES);
    const link: Link = { client, server, pending: new Set(), opening };
    this.links.add(link);
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1').toLowerCase();
      if (link.opening.length < OPENING_BYTES) link.opening += text.slice(0, OPENING_BYTES - link.opening.length);
      for (const pattern of this.watched) {
        if (!text.includes(pattern)) continue;
        this.sent.set(pattern, (this.sent.get(pattern) ?? 0) + 1);
        link.pending.add(pattern);
      }
      const cutOn = this.cutOn;
      if (cutOn !== undefined && text.includes(cutOn.text)) {
        this.cutOn = undefined;
        this.setMode(cutOn.then);
        this.cut(link);
        cutOn.done();
        return;
      }
      const holdAfter = this.holdAfter;
      if (holdAfter !== undefined && text.includes(holdAfter.text)) {
        this.holdAfter = undefined;
        this.holdReplies();
        holdAfter.done();
      }
      server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      if (this.heldReplies !== undefined) this.heldReplies.push([link, chunk]);
      else this.reply(link, chunk);
    });
    const end = (): void => this.cut(link);
    client.on('close', end);
    server.on('close', end);
  }

  /** Passes a server's reply to its client (or swallows it: swallowReply). */
  private reply(link: Link, chunk: Buffer): void {
    const swallow = this.swallow;
    if (swallow !== undefined && chunk.toString('latin1').toLowerCase().includes(swallow.text)) {
      this.swallow = undefined;
      this.cut(link);
      swallow.done();
      return;
    }
    for (const pattern of link.pending) this.answered.set(pattern, (this.answered.get(pattern) ?? 0) + 1);
    link.pending.clear();
    link.client.write(chunk);
  }

  /** Ends both sides; the client's with a reset (ECONNRESET), as a network failure does. */
  private cut(link: Link): void {
    if (!this.links.delete(link)) return;
    link.client.resetAndDestroy();
    link.server.destroy();
  }
}
