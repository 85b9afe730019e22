import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/** The cookie the page gets after `/?token=`: the browser sends it with every request, SSE included. */
export const TOKEN_COOKIE = 'prefork_dashboard_token';

/** Why a request is refused before any route runs, or undefined when it may go on. */
export interface Refusal {
  status: 401 | 403;
  message: string;
}

/**
 * Addresses of this machine: all of 127.0.0.0/8 and ::1, in any spelling
 * (`::ffff:127.0.0.2`, `0:0:0:0:0:0:0:1`). A dashboard bound to one answers
 * only requests addressed to one, or to localhost.
 */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether `host` (an address to bind, or a Host header's name) is one only this machine reaches. */
export function isLoopback(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost') return true;
  const family = isIP(name);
  return family !== 0 && LOOPBACK.check(name, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Every request passes here first, and only here: the token when one is
 * set; on a loopback address, a Host header that names this machine (a
 * page elsewhere whose name was rebound to 127.0.0.1 sends its own); and
 * for actions a JSON body (a cross-site form cannot send one without the
 * browser asking first, which this server never allows).
 */
export class RequestGuard {
  private readonly token: Buffer | undefined;
  private readonly loopbackOnly: boolean;

  /** `host`: the address the dashboard binds. */
  constructor(token: string | undefined, host: string) {
    this.token = token === undefined ? undefined : Buffer.from(token);
    this.loopbackOnly = isLoopback(host);
  }

  /** Whether a token is asked for. */
  get needsToken(): boolean {
    return this.token !== undefined;
  }

  /** Whether `given` is the token (constant time). */
  matches(given: string | undefined): boolean {
    if (this.token === undefined) return true;
    if (given === undefined) return false;
    const bytes = Buffer.from(given);
    return bytes.length === this.token.length && timingSafeEqual(bytes, this.token);
  }

  check(req: IncomingMessage, url: URL): Refusal | undefined {
    if (this.loopbackOnly && !isLoopback(hostName(req.headers.host ?? '')))
      return {
        status: 403,
        message: `the dashboard listens on this machine only: Host '${req.headers.host ?? ''}' refused (use 127.0.0.1 or localhost)`,
      };
    if (!this.matches(bearer(req) ?? cookie(req, TOKEN_COOKIE) ?? url.searchParams.get('token') ?? undefined))
      return {
        status: 401,
        message:
          'this dashboard needs its token: open /?token=<token>, or send the header Authorization: Bearer <token>',
      };
    // Media types are case-insensitive (RFC 9110): Application/JSON is JSON too.
    if (req.method === 'POST' && !(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json'))
      return { status: 403, message: 'actions take a JSON body (Content-Type: application/json)' };
    return undefined;
  }
}

/** The host part of a Host header (`[::1]:5555` → `[::1]`, `localhost:5555` → `localhost`). */
function hostName(header: string): string {
  const m = /^(\[[^\]]*\]|[^:]*)(?::\d+)?$/.exec(header);
  return (m?.[1] ?? '').toLowerCase();
}

/** `Authorization: Bearer <token>`; the scheme's name is case-insensitive and may be followed by several spaces (RFC 9110 11.1). */
function bearer(req: IncomingMessage): string | undefined {
  const m = /^Bearer +(.+)$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
