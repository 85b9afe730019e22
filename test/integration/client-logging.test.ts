/** The Client in an application: its logs go to stderr at warn by default, never to the application's stdout. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fixture } from '../helpers/worker.js';

describe('Client logging', () => {
  it('logs a lost broker to stderr, once keyed by component, and nothing to stdout', () => {
    const r = spawnSync(process.execPath, [fixture('client-unreachable.mjs')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    const logged = r.stderr.split('\n').filter((l) => l.startsWith('{'));
    expect(logged.length).toBeGreaterThan(0);
    for (const line of logged) {
      expect(line.match(/"component":/g) ?? []).toHaveLength(1);
      expect((JSON.parse(line) as { level: number }).level).toBeGreaterThanOrEqual(40);
    }
    expect(r.stderr).toMatch(/enqueue failed: cannot connect to the broker/);
  });
});
