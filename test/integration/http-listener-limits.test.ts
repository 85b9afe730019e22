/**
 * The limits of the HTTP server behind a node's metrics and health
 * endpoints and the dashboard: it may face whoever can reach its port, so
 * a client that opens connections without end, or trickles a request,
 * must not take the node's file descriptors nor hold a socket for minutes.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpListener, MAX_CONNECTIONS } from '../../dist/observe/http-listener.js';
import { captureLog } from '../helpers/worker.js';

let listener: HttpListener | undefined;
let { log, lines } = captureLog();
const sockets: Socket[] = [];

afterEach(async () => {
  ({ log, lines } = captureLog());
  for (const s of sockets.splice(0)) s.destroy();
  await listener?.close();
  listener = undefined;
});

async function serve(): Promise<{ port: number }> {
  // Answers once the request's body is in, as the dashboard's actions do.
  listener = new HttpListener((req, res) => req.resume().once('end', () => res.end('ok')), log);
  await listener.listen('127.0.0.1', 0, ['test']);
  return { port: Number(new URL(listener.url as string).port) };
}

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
    sockets.push(socket);
  });
}

/** Everything the server sends on `socket` until it closes it. */
function untilClosed(socket: Socket): Promise<string> {
  let got = '';
  socket.on('data', (d: Buffer) => (got += d.toString()));
  return new Promise((resolve) => socket.once('close', () => resolve(got)));
}

describe('the HTTP listener of endpoints and the dashboard', () => {
  it(`holds at most ${MAX_CONNECTIONS} connections: one past it is closed unanswered, the others still served`, async () => {
    const { port } = await serve();
    const held = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => open(port)));
    const extra = await open(port);
    extra.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await untilClosed(extra)).toBe('');
    // Said once, with the cap (a probe refused this way would otherwise fail with no word why).
    expect(lines.filter((l) => l.level === 40).map((l) => [l.msg, l.maxConnections])).toEqual([
      [
        `${MAX_CONNECTIONS} connections are open already: 1 more closed as they came (health probes share this cap)`,
        MAX_CONNECTIONS,
      ],
    ]);
    const first = held[0] as Socket;
    const answer = untilClosed(first);
    first.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(await answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/);
  });

  it('answers a request whose body stops coming 408 and closes it, instead of waiting minutes', async () => {
    const { port } = await serve();
    const socket = await open(port);
    const answer = untilClosed(socket);
    // Headers whole, 1 byte of a 100-byte body, then nothing (Node's default would hold it 300 s).
    socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\nx');
    expect(await answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });
});
