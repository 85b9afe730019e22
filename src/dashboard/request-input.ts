import type { ListedState } from '../broker/types.js';
import { OptionError } from '../errors.js';
import { checkJobId, checkQueueName, throwOptionError } from '../job-option-checks.js';
import { parsePageLimit } from '../broker/job-page-checks.js';
import { integerRange } from '../util/units.js';

/**
 * What the page sends (query parameters, JSON bodies), checked: a bad value
 * is an OptionError naming it (the server answers 400 with its message).
 * Fields are read with Object.hasOwn: a body never reaches a prototype.
 */
export type Body = Record<string, unknown>;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON body in UTF-8 that is an object, or an OptionError (bytes that are not UTF-8 are refused, not read as U+FFFD). */
export function parseBody(bytes: Buffer): Body {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new OptionError('body', `${bytes.byteLength} bytes`, 'JSON in UTF-8');
  }
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new OptionError('body', text.slice(0, 80), 'a JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new OptionError('body', value, 'a JSON object');
  return value as Body;
}

function field(body: Body, name: string): unknown {
  return Object.hasOwn(body, name) ? body[name] : undefined;
}

/** An action's `id`: a job id, as checkJobId takes it. */
export function requiredJobId(body: Body): string {
  return checkJobId('id', field(body, 'id'), throwOptionError);
}

export function requiredString(body: Body, name: string): string {
  const v = field(body, name);
  if (typeof v !== 'string' || v === '') throw new OptionError(name, v, 'a non-empty string');
  return v;
}

/**
 * A field that may be left out (absent or null). Given, it is a non-empty
 * string: an empty one (an unset variable in a script) would otherwise read
 * as left out, and a `node` or `queue` that narrows an action would widen
 * it to every node or queue.
 */
export function optionalString(body: Body, name: string): string | undefined {
  const v = field(body, name);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '') throw new OptionError(name, v, `a non-empty string, or no ${name} field`);
  return v;
}

export function optionalQueue(body: Body, name: string): string | undefined {
  const v = optionalString(body, name);
  if (v !== undefined) checkQueueName(name, v, throwOptionError);
  return v;
}

export function optionalBoolean(body: Body, name: string): boolean {
  const v = field(body, name);
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new OptionError(name, v, 'true or false');
  return v;
}

export function stringList(body: Body, name: string): string[] {
  const v = field(body, name);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new OptionError(name, v, 'an array of strings');
  return v as string[];
}

/**
 * The query of a GET route, read strictly: a parameter given more than once
 * is an OptionError naming it (which value would win is an accident of the
 * reader, so a URL that repeats one is refused rather than half read), and
 * so is one whose percent-encoding is not UTF-8 (URLSearchParams would read
 * `%E0%A4%A` as U+FFFD and go on with a value nobody sent).
 */
export function queryParams(search: string): URLSearchParams {
  for (const part of search.replace(/^\?/, '').split('&')) {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      const eq = part.indexOf('=');
      throw new OptionError(eq < 0 ? part : part.slice(0, eq), part, 'percent-encoded UTF-8 (e.g. %C3%A9 for é)');
    }
  }
  const params = new URLSearchParams(search);
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name);
    if (values.length > 1) throw new OptionError(name, values, `one value, not ${values.length}`);
  }
  return params;
}

/** What the guard reads from any query (`?token=`): allowed beside every route's own parameters. */
const GUARD_PARAMS = ['token'];

/**
 * Refuses a parameter that is not one of `names` (or the guard's): a
 * misspelt one (`limt=5`) would otherwise be ignored and the route answer
 * something else than was asked, with nothing saying so.
 */
export function onlyParams(params: URLSearchParams, names: readonly string[]): void {
  for (const name of params.keys())
    if (!names.includes(name) && !GUARD_PARAMS.includes(name))
      throw new OptionError(
        name,
        params.get(name),
        names.length === 0 ? 'no query parameter here' : `a known parameter: ${names.join(', ')}`,
      );
}

/**
 * Most jobs on one page (the page asks 25). A page holds each job's
 * arguments whole, up to 64 KiB of msgpack each and several times that
 * decoded: the 10,000 `prefork jobs` may ask for would take the dashboard
 * gigabytes for one request, from anyone who may read it.
 */
export const PAGE_MAX = 100;
const PAGE_EXPECTED = integerRange(1, PAGE_MAX);

/** A job page's query: `queue`, `state` (waiting, delayed, dead), `limit`, `cursor`; `listJobs` checks `state`. */
export function pageQuery(params: URLSearchParams): {
  queue: string;
  state: ListedState;
  limit: number;
  cursor: string | undefined;
} {
  onlyParams(params, ['queue', 'state', 'limit', 'cursor']);
  const queue = params.get('queue') ?? '';
  checkQueueName('queue', queue, throwOptionError);
  const state = (params.get('state') ?? 'waiting') as ListedState;
  const limitText = params.get('limit') ?? '20';
  // Checked here, as typed: a NaN or a rounded number would reach listJobs' message instead.
  const limit = parsePageLimit(limitText);
  if (limit === undefined || limit > PAGE_MAX) throw new OptionError('limit', limitText, PAGE_EXPECTED);
  const cursor = params.get('cursor') ?? '';
  return { queue, state, limit, cursor: cursor === '' ? undefined : cursor };
}

/** One job's query: `id`, a non-empty string. */
export function jobIdQuery(params: URLSearchParams): string {
  onlyParams(params, ['id']);
  const id = params.get('id');
  return checkJobId('id', id ?? undefined, throwOptionError);
}
