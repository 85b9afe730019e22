/**
 * The CLI in a namespace of its own (`--namespace`, else $PREFORK_NAMESPACE,
 * else "prefork"): a worker started in one serves only the jobs enqueued in
 * it, every one-shot command reads it, and a worker's --lease and
 * --result-ttl reach its broker. A bad name is one line naming the flag (or
 * the variable), exit 2.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, emptyRedisDb, fixture, newLedger, spawnCliWorker } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 52;

function run(
  args: string[],
  env: Record<string, string> = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('a bad namespace is one line naming where it came from, exit 2', () => {
  it.each([
    [['inspect', 'queues', '--namespace', 'a b'], {}, "'--namespace <name>' argument 'a b'"],
    [['worker', '--app', 'x.mjs', '--namespace', '{x}'], {}, "'--namespace <name>' argument '{x}'"],
    [['enqueue', 'add', '1', '2', '--namespace', ''], {}, "'--namespace <name>' argument ''"],
    [['inspect', 'queues'], { PREFORK_NAMESPACE: 'a{b' }, "$PREFORK_NAMESPACE 'a{b'"],
    [['result', 'x', '--namespace', 'app:res'], {}, 'a namespace with no ":res" part'],
    [['inspect', 'queues'], { PREFORK_NAMESPACE: 'app:reply' }, 'a namespace with no ":reply" part'],
  ])('%j %j', (args, env, named) => {
    const r = run(args, env);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(named);
  });

  it.each([
    [['worker', '--app', 'x.mjs', '--lease', '10ms'], "'--lease <duration>' argument '10ms'"],
    [['worker', '--app', 'x.mjs', '--result-ttl', 'forever'], "'--result-ttl <duration>' argument 'forever'"],
  ])('%j', (args, named) => {
    const r = run(args);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(named);
  });
});

describe('a worker and the one-shot commands in a namespace', { timeout: 120_000 }, () => {
  let url = '';
  beforeAll(async () => {
    url = await emptyRedisDb(DB);
    await spawnCliWorker(
      [
        '--app',
        fixture('worker-tasks.mjs'),
        '--broker',
        url,
        '-c',
        '1',
        '--namespace',
        'app-one',
        '--lease',
        '7s',
        '--result-ttl',
        '1h',
      ],
      { env: { PREFORK_TEST_LEDGER: newLedger() } },
    ).ready;
  });
  afterAll(cleanup);

  it('runs what is enqueued in its namespace, by flag or by $PREFORK_NAMESPACE; results are read there', () => {
    const byFlag = run(['enqueue', 'add', '2', '3', '--wait', '--json', '--broker', url, '--namespace', 'app-one']);
    expect(byFlag.code).toBe(0);
    const done = JSON.parse(byFlag.stdout) as { id: string; state: string; value: unknown };
    expect(done).toMatchObject({ state: 'SUCCESS', value: 5 });
    const byEnv = run(['enqueue', 'add', '4', '5', '--wait', '--json', '--broker', url], {
      PREFORK_NAMESPACE: 'app-one',
    });
    expect(JSON.parse(byEnv.stdout)).toMatchObject({ state: 'SUCCESS', value: 9 });
    // The result is in app-one, not in the default namespace.
    const there = run(['result', done.id, '--json', '--broker', url], { PREFORK_NAMESPACE: 'app-one' });
    expect(JSON.parse(there.stdout)).toMatchObject({ id: done.id, state: 'SUCCESS', value: 5 });
    const elsewhere = run(['result', done.id, '--json', '--broker', url]);
    expect(JSON.parse(elsewhere.stdout)).toMatchObject({ id: done.id, state: 'PENDING' });
  });

  it('leaves a job of the default namespace waiting there; the flag wins over the variable', () => {
    const id = run(['enqueue', 'add', '1', '1', '--broker', url]).stdout.trim();
    expect(id).not.toBe('');
    const counts = (args: string[], env: Record<string, string> = {}): { queue: string; waiting: number }[] =>
      JSON.parse(run(['inspect', 'queues', '--json', '--broker', url, ...args], env).stdout) as {
        queue: string;
        waiting: number;
      }[];
    expect(counts([])).toEqual([expect.objectContaining({ queue: 'default', waiting: 1 })]);
    expect(counts(['--namespace', 'app-one'], { PREFORK_NAMESPACE: 'elsewhere' })).toEqual([
      expect.objectContaining({ queue: 'default', waiting: 0 }),
    ]);
  });

  it("gives the worker's broker its --lease and --result-ttl", async () => {
    const done = JSON.parse(
      run(['enqueue', 'echo', '"kept"', '--wait', '--json', '--broker', url, '--namespace', 'app-one']).stdout,
    ) as { id: string };
    const redis = new Redis(url);
    try {
      const ttl = await redis.pttl(`app-one:res:${done.id}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
      expect(ttl).toBeGreaterThan(60_000);
      // The node's lease deadline (Redis's clock): at most 7 s ahead, where the default lease is 20 s.
      const [node, deadline] = await redis.zrange('{app-one}:nodes', 0, 0, 'WITHSCORES');
      expect(node).toBeDefined();
      const [sec, usec] = await redis.time();
      const leaseLeft = Number(deadline) - (Number(sec) * 1000 + Math.floor(Number(usec) / 1000));
      expect(leaseLeft).toBeLessThanOrEqual(7_000);
    } finally {
      redis.disconnect();
    }
  });
});
