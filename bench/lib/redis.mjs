// Redis helpers for the Redis scenarios: command counts from INFO commandstats
// (commands run inside Lua scripts are counted there too), and a logger that
// keeps prefork quiet.
import { Redis } from 'ioredis';
import { pino } from 'pino';

export const quietLogger = () => pino({ level: 'warn' });

/** Calls per command name, from INFO commandstats. */
export async function commandCounts(redis) {
  const text = await redis.info('commandstats');
  return Object.fromEntries([...text.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)].map((m) => [m[1], Number(m[2])]));
}

/**
 * Commands run between two commandCounts() snapshots, without the INFO calls
 * the snapshots themselves made: { total, byCommand }.
 */
export function commandDelta(before, after) {
  const byCommand = {};
  let total = 0;
  for (const [name, calls] of Object.entries(after)) {
    let d = calls - (before[name] ?? 0);
    if (name === 'info') d -= 1; // the `after` snapshot's own INFO is counted in it
    if (d > 0) {
      byCommand[name] = d;
      total += d;
    }
  }
  return { total, byCommand };
}

export function connect(url) {
  return new Redis(url, { maxRetriesPerRequest: null });
}

/** Polls `check()` every `everyMs` until true; resolves with performance.now() at the poll that saw it. */
export async function pollUntil(check, everyMs = 10, timeoutMs = 300_000) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return performance.now();
    if (performance.now() > deadline) throw new Error('timed out waiting for the jobs to complete');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
