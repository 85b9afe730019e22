/** The Client in an application: its logs go to stderr at warn by default, never to the application's stdout. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fixture } from '../helpers/worker.js';

/** The fixture, with `$PREFORK_LOG_LEVEL` set to `level` or, without one, unset (the Client's default). */
function runUnreachable(level?: string): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.PREFORK_LOG_LEVEL;
  if (level !== undefined) env.PREFORK_LOG_LEVEL = level;
  return spawnSync(process.execPath, [fixture('client-unreachable.mjs')], { encoding: 'utf8', timeout: 60_000, env });
}

describe('Client logging', () => {
  it('logs to stderr, once keyed by component, and nothing to stdout', () => {
    // A connect that fails is the caller's to report (enqueue rejects); the connection says so at debug.
    const r = runUnreachable('debug');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    const logged = r.stderr.split('\n').filter((l) => l.startsWith('{'));
    expect(logged.some((l) => l.includes('"msg":"redis connection attempt failed"'))).toBe(true);
    for (const line of logged) expect(line.match(/"component":/g) ?? []).toHaveLength(1);
    expect(r.stderr).toMatch(/enqueue failed: cannot connect to the broker/);
  });

  it('at warn by default: the failed connect is the rejection alone', () => {
    const r = runUnreachable();
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^enqueue failed: cannot connect to the broker/),
    ]);
  });
});
