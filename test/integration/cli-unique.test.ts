/**
 * `prefork enqueue --unique`, `--unique-key`, `--unique-ttl` and `--id`
 * against a real Redis (a database of this file's own): a job enqueued again
 * while the first waits adds nothing, prints the first job's id and says so
 * on stderr; bad combinations are refused with exit 2.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { emptyRedisDb } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 25;
let url = '';

beforeEach(async () => {
  url = await emptyRedisDb(DB);
});

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--broker', url], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function queued(queue: string): number {
  const r = run(['inspect', 'queues', '--json']);
  expect(r.code, r.stderr).toBe(0);
  const rows = JSON.parse(r.stdout) as { queue: string; waiting: number }[];
  return rows.find((q) => q.queue === queue)?.waiting ?? 0;
}

describe('prefork enqueue of a unique job', { timeout: 120_000 }, () => {
  it('--unique twice: the first job, once', () => {
    const first = run(['enqueue', 'add', '1', '2', '-q', 'u', '--unique']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toBe('');
    const id = first.stdout.trim();
    const again = run(['enqueue', 'add', '1', '2', '-q', 'u', '--unique', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ id, duplicate: true });
    expect(again.stderr).toContain(`nothing added: job ${id} (the same unique key) is known already`);
    expect(run(['enqueue', 'add', '9', '9', '-q', 'u', '--unique-key', 'k', '--unique-ttl', '1h']).code).toBe(0);
    expect(run(['enqueue', 'add', '1', '1', '-q', 'u', '--unique-key', 'k']).stderr).toContain('nothing added');
    expect(queued('u')).toBe(2);
  });

  it('--id twice: the first job, once', () => {
    expect(run(['enqueue', 'add', '1', '2', '-q', 'i', '--id', 'report-7']).stdout.trim()).toBe('report-7');
    const again = run(['enqueue', 'add', '1', '2', '-q', 'i', '--id', 'report-7']);
    expect(again.stdout.trim()).toBe('report-7');
    expect(again.stderr).toContain('nothing added: job report-7 (the same id) is known already');
    expect(queued('i')).toBe(1);
  });

  it('--id with --unique: a duplicate names what it shares, the id or the key', () => {
    expect(run(['enqueue', 'add', '1', '2', '-q', 'b', '--id', 'both-1', '--unique-key', 'k1']).code).toBe(0);
    // The same id, another key: the id is what is known already.
    const sameId = run(['enqueue', 'add', '1', '2', '-q', 'b', '--id', 'both-1', '--unique-key', 'k2']);
    expect(sameId.stderr).toContain('nothing added: job both-1 (the same id) is known already');
    // Another id, the same key: the key.
    const sameKey = run(['enqueue', 'add', '1', '2', '-q', 'b', '--id', 'both-2', '--unique-key', 'k1']);
    expect(sameKey.stderr).toContain('nothing added: job both-1 (the same unique key) is known already');
    expect(queued('b')).toBe(1);
  });

  it('--unique-ttl alone, or a bad value: exit 2, naming the flag', () => {
    const alone = run(['enqueue', 'add', '1', '--unique-ttl', '1h']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--unique-ttl');
    const bad = run(['enqueue', 'add', '1', '--unique', '--unique-ttl', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--unique-ttl');
    expect(bad.stderr).toContain('soon');
    expect(run(['enqueue', 'add', '1', '--unique-key', '']).code).toBe(2);
  });
});
