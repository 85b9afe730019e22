/**
 * The CLI's admin commands over keys of prefork's namespace that another
 * program wrote with another type: each exits 1 with one line naming the key
 * and what it holds (no stack), and leaves the key as it was.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, expect, inject, it } from 'vitest';
import '../setup/provided.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
let namespace = '';
let raw: Redis;

beforeEach(() => {
  namespace = `cfk${randomUUID().slice(0, 8)}`;
  raw = new Redis(inject('redisUrl'));
});
afterEach(async () => {
  const keys = await raw.keys(`{${namespace}}:*`);
  if (keys.length > 0) await raw.del(...keys);
  await raw.quit();
});

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--broker', inject('redisUrl'), '--namespace', namespace], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

it.each([
  ['inspect queues', 'queues', 'set'],
  ['inspect queues', 'paused', 'set'],
  ['dead list', 'queues', 'set'],
  ['dead list -q q', 'dead:q', 'stream'],
  ['dead retry --all -q q', 'dead:q', 'stream'],
  ['dead purge -q q', 'dead:q', 'stream'],
  ['jobs q --state delayed', 'delayed:q', 'zset'],
  ['purge q', 'q:q', 'stream'],
  ['schedule list', 'schedules', 'set'],
  ['events', 'events', 'stream'],
])(
  'prefork %s with a string at {ns}:%s: exit 1, one line naming the key; the key kept',
  async (command, suffix, type) => {
    const key = `{${namespace}}:${suffix}`;
    await raw.set(key, 'foreign');
    const r = run(command.split(' '));
    expect(r.stderr).toMatch(/^error: Redis refused the .*: WRONGTYPE [^\n]*\n$/);
    expect(r.stderr.endsWith(`(${key} is a string, not a ${type})\n`)).toBe(true);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(await raw.get(key)).toBe('foreign');
  },
);
