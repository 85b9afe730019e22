import { throwOptionError } from '../job-option-checks.js';
import type { Bad } from '../util/units.js';
import { maskUrl } from './mask-url.js';

const EXPECTED_URL = 'redis://[user:password@]host:port[/db] or rediss://...';
/** What createBroker takes. */
export const EXPECTED_BROKER_URL = 'a redis://, rediss:// or memory:// URL';
const EXPECTED_DB = `${EXPECTED_URL}, the db a whole number >= 0`;

/**
 * The URL parameters a broker URL may carry, each with its check. ioredis
 * turns every other one into a connection option, and one from the URL
 * wins over prefork's own: `?retryStrategy=1` left a node that lost its
 * connection silently never reconnecting, `?commandTimeout=5` cut a node's
 * fetches short (jobs reserved with no one to run them), `?keyPrefix=x`
 * moved every key out of the Clients' sight.
 */
const URL_PARAMS = new Map<string, (value: string) => boolean>([
  ['db', isDbIndex],
  ['family', (value) => value === '0' || value === '4' || value === '6'],
]);
const EXPECTED_PARAMS = `${EXPECTED_URL}, with no URL parameter but db (a whole number >= 0) and family (0, 4 or 6), each given once`;

/**
 * Refuses, through `bad`, a URL createBroker would not take, or a redis://
 * one ioredis would misread (an OptionError on `broker` by default; the CLI
 * names $PREFORK_BROKER_URL when the URL came from there).
 */
export function checkBrokerUrl(url: string, bad: Bad = throwOptionError): void {
  if (url.startsWith('memory://')) return;
  if (!url.startsWith('redis://') && !url.startsWith('rediss://')) bad('broker', maskUrl(url), EXPECTED_BROKER_URL);
  checkUrl(url, bad);
}

/** Refuses a redis:// URL ioredis would misread, through `bad`. */
export function checkUrl(url: string, bad: Bad = throwOptionError): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    bad('broker', maskUrl(url), EXPECTED_URL);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') bad('broker', maskUrl(url), EXPECTED_URL);
  // ioredis reads the db with parseInt: "/abc" became SELECT NaN (an uncaught error), "/2x" or "/2/3" database 2.
  const path = parsed.pathname === '/' ? '' : parsed.pathname.slice(1);
  if (path !== '' && !isDbIndex(path)) bad('broker', maskUrl(url), EXPECTED_DB);
  // ioredis takes the path's db and drops ?db= without a word: a URL naming two dbs is a mistake either way.
  if (path !== '' && parsed.searchParams.has('db'))
    bad('broker', maskUrl(url), `${EXPECTED_DB}, given once (the path or ?db=)`);
  // A repeated one too: this check would read the first, ioredis takes the last.
  const seen = new Set<string>();
  for (const [name, value] of parsed.searchParams) {
    const valid = URL_PARAMS.get(name);
    if (valid === undefined || seen.has(name) || !valid(value))
      bad('broker', maskUrl(url), name === 'db' && !seen.has(name) ? EXPECTED_DB : EXPECTED_PARAMS);
    seen.add(name);
  }
}

function isDbIndex(text: string): boolean {
  return /^\d+$/.test(text) && Number.isSafeInteger(Number(text));
}
