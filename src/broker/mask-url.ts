/**
 * A broker URL as logs and error messages show it: any password masked,
 * `redis://user:***@host:port/db` (one given as `?password=` too). A URL
 * that does not parse (a password with an unencoded "/" in it) is masked
 * from its user's ":" to its last "@": what cannot be read is not shown.
 */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    if (u.searchParams.has('password')) u.searchParams.set('password', '***');
    // The scheme as typed: URL lowercases it, and "REDIS://" is refused for its case.
    // A trailing "/" as URL adds it, but not the one of "redis://" (no host: ioredis's default), shown as typed.
    const shown = u.toString().replace(/([^/])\/$/, '$1');
    return url.slice(0, u.protocol.length) + shown.slice(u.protocol.length);
  } catch {
    return url.replace(/^([^/]*\/\/[^:@/]*):.*@/s, '$1:***@');
  }
}
