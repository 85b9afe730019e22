/**
 * One-shot commands refuse memory://: that broker lives inside one process,
 * so `prefork enqueue --broker memory://` would print an id for a job that
 * is gone when the command exits. One line naming where the URL came from,
 * exit code 2, and nothing printed on stdout.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

function run(
  args: string[],
  env: Record<string, string> = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('one-shot commands on memory://', () => {
  it.each([
    [['enqueue', 'add', '1', '2']],
    [['enqueue', 'add', '1', '2', '--wait']],
    [['result', 'some-id']],
    [['purge', 'default']],
    [['dead', 'list']],
    [['dead', 'retry', '--all']],
    [['dead', 'purge']],
    [['inspect', 'nodes']],
    [['inspect', 'queues']],
    [['inspect', 'stats']],
    [['control', 'ping']],
  ])('%j --broker memory://x is refused: one line, exit 2, nothing on stdout', (args) => {
    const r = run([...args, '--broker', 'memory://x']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("option '-b, --broker <url>' argument 'memory://x' is invalid");
    expect(lines[0]).toMatch(/lives inside one process/);
  });

  it('a memory:// URL from $PREFORK_BROKER_URL is refused too, naming the variable', () => {
    const r = run(['enqueue', 'add', '1', '2'], { PREFORK_BROKER_URL: 'memory://' });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringContaining("$PREFORK_BROKER_URL 'memory://' is invalid"),
    ]);
  });
});
