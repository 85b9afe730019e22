/**
 * The `prefork` command as people use it: real processes, the real Redis from
 * the test setup (its own db number, so no other test file sees these keys).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBroker } from 'prefork/broker';
import { cleanup, emptyRedisDb, fixture, newLedger, readLedger, silent, spawnCliWorker } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 7;

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

describe('bad flags: one line naming the flag and the value, exit code 2', () => {
  it.each([
    [['worker', '--app', 'x.mjs', '-c', 'zero'], '-c, --concurrency <n>', 'zero'],
    [['worker', '--app', 'x.mjs', '--autoscale', '3,5'], '--autoscale <max,min>', '3,5'],
    [['worker', '--app', 'x.mjs', '--max-concurrency', '0'], '--max-concurrency <n>', '0'],
    [['worker', '--app', 'x.mjs', '-O', 'fast'], '-O, --strategy <name>', 'fast'],
    [['worker', '--app', 'x.mjs', '--queue-order', 'random'], '--queue-order <order>', 'random'],
    [['worker', '--app', 'x.mjs', '-Q', 'a:0'], '-Q, --queues <list>', 'a:0'],
    [['worker', '--app', 'x.mjs', '--prefetch-multiplier', '0'], '--prefetch-multiplier <n>', '0'],
    [['worker', '--app', 'x.mjs', '--max-tasks-per-child', '1.5'], '--max-tasks-per-child <n>', '1.5'],
    [['worker', '--app', 'x.mjs', '--max-memory-per-child', 'lots'], '--max-memory-per-child <size>', 'lots'],
    [['worker', '--app', 'x.mjs', '--time-limit', 'soon'], '--time-limit <duration>', 'soon'],
    [['worker', '--app', 'x.mjs', '--soft-time-limit', '-'], '--soft-time-limit <duration>', '-'],
    [['worker', '--app', 'x.mjs', '--log-level', 'loud'], '--log-level <level>', 'loud'],
    [['worker', '--app', 'x.mjs', '--broker', 'http://x'], '--broker <url>', 'http://x'],
    // The flag gets the whole check $PREFORK_BROKER_URL gets, in the same words as every other flag.
    [['events', '--broker', 'redis://127.0.0.1:1/abc'], '--broker <url>', 'redis://127.0.0.1:1/abc'],
    [
      ['events', '--broker', 'redis://127.0.0.1:1?retryStrategy=1'],
      '--broker <url>',
      'redis://127.0.0.1:1?retryStrategy=1',
    ],
    [['worker', '--app', 'no/such/file.mjs'], '--app <module>', 'no/such/file.mjs'],
    [['enqueue', 'add', '--delay', 'later'], '--delay <duration>', 'later'],
    [['enqueue', 'add', '--retries', 'many'], '--retries <n>', 'many'],
    [['enqueue', 'add', '--queue', 'a b'], '--queue <name>', 'a b'],
    // Past 2^53-1 a number is no longer the one typed, and the broker's scripts refuse it: refused here, as typed.
    [['worker', '--app', 'x.mjs', '-c', '99999999999999999999'], '-c, --concurrency <n>', '99999999999999999999'],
    [['worker', '--app', 'x.mjs', '-c', '5000'], '-c, --concurrency <n>', '5000'],
    [['worker', '--app', 'x.mjs', '--max-concurrency', '5000'], '--max-concurrency <n>', '5000'],
    [
      ['worker', '--app', 'x.mjs', '--autoscale', '99999999999999999999,1'],
      '--autoscale <max,min>',
      '99999999999999999999,1',
    ],
    [
      ['worker', '--app', 'x.mjs', '--prefetch-multiplier', '99999999999999999999'],
      '--prefetch-multiplier <n>',
      '99999999999999999999',
    ],
    [['worker', '--app', 'x.mjs', '--prefetch-multiplier', '1025'], '--prefetch-multiplier <n>', '1025'],
    [
      ['worker', '--app', 'x.mjs', '--max-redeliveries', '99999999999999999999'],
      '--max-redeliveries <n>',
      '99999999999999999999',
    ],
    [
      ['worker', '--app', 'x.mjs', '--max-tasks-per-child', '99999999999999999999'],
      '--max-tasks-per-child <n>',
      '99999999999999999999',
    ],
    [['enqueue', 'add', '--retries', '99999999999999999999'], '--retries <n>', '99999999999999999999'],
    [['events', '-n', '99999999999999999999'], '-n, --last <n>', '99999999999999999999'],
    // A weight is a share: bounded (10,000), so no fetch pays for a huge one.
    [['worker', '--app', 'x.mjs', '-Q', 'a:99999999999999999999'], '-Q, --queues <list>', 'a:99999999999999999999'],
    [['worker', '--app', 'x.mjs', '-Q', 'default:10001,b'], '-Q, --queues <list>', 'default:10001,b'],
    // Celery's time limits count seconds: its --time-limit 300 (5 minutes) would kill every job after 300 ms.
    [['worker', '--app', 'x.mjs', '--time-limit', '300'], '--time-limit <duration>', '300'],
    [
      ['worker', '--app', 'x.mjs', '--soft-time-limit', '60', '--time-limit', '5m'],
      '--soft-time-limit <duration>',
      '60',
    ],
    [['enqueue', 'add', '--time-limit', '30'], '--time-limit <duration>', '30'],
    // Every duration flag: a bare number is seconds to some and ms to others (86400 would keep results 86 s).
    [['worker', '--app', 'x.mjs', '--result-ttl', '86400'], '--result-ttl <duration>', '86400'],
    [['worker', '--app', 'x.mjs', '--lease', '30000'], '--lease <duration>', '30000'],
    [['enqueue', 'add', '--delay', '60'], '--delay <duration>', '60'],
    [['enqueue', 'add', '--unique', '--unique-ttl', '600'], '--unique-ttl <duration>', '600'],
    [['enqueue', 'add', '--wait', '--timeout', '30'], '--timeout <duration>', '30'],
    [['enqueue', 'add', '--backoff', 'fixed:5'], '--backoff <spec>', 'fixed:5'],
    [['inspect', 'stats', '--timeout', '5000'], '--timeout <duration>', '5000'],
    [['revoke', 'x', '--grace', '10'], '--grace <duration>', '10'],
    [['dashboard', '--interval', '2'], '--interval <duration>', '2'],
    // An empty job id names no job: refused before the broker is asked (as revoke always did).
    [['result', '', '--broker', 'redis://127.0.0.1:1'], "argument 'id'", ''],
    [['dead', 'retry', 'a', '', '--broker', 'redis://127.0.0.1:1'], "argument 'ids'", ''],
    [['dead', 'delete', '', '--broker', 'redis://127.0.0.1:1'], "argument 'ids'", ''],
    [['revoke', '', '--broker', 'redis://127.0.0.1:1'], "argument 'ids'", ''],
    // An empty node name names no node: events would print nothing, control and inspect find none.
    [['control', 'shutdown', '--node', '', '--broker', 'redis://127.0.0.1:1'], '--node <name>', ''],
    [['inspect', 'stats', '--node', '', '--broker', 'redis://127.0.0.1:1'], '--node <name>', ''],
    [['events', '--node', '', '--broker', 'redis://127.0.0.1:1'], '--node <name>', ''],
    // An empty token would be "token required" that `/?token=` opens, and no warning on 0.0.0.0.
    [['dashboard', '--auth-token', '', '--broker', 'redis://127.0.0.1:1'], '--auth-token <token>', ''],
  ])('%j', (args, flag, value) => {
    const r = run(args);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(flag);
    expect(lines[0]).toContain(`'${value}'`);
  });

  it.each([
    ['a URL of another scheme', 'http://user:s3cret@127.0.0.1:6379'],
    ['a URL with an unencoded "/" in its password', 'redis://:s3/cret@127.0.0.1:6379'],
  ])('a refused broker URL, %s, is shown with its password masked, as a flag and from the environment', (_, url) => {
    for (const [r, named] of [
      [run(['events', '--broker', url]), '--broker'],
      [run(['events'], { PREFORK_BROKER_URL: url }), '$PREFORK_BROKER_URL'],
    ] as const) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(named);
      expect(r.stderr).toContain(':***@');
      expect(r.stderr).not.toContain('cret');
    }
  });

  it('an empty $PREFORK_DASHBOARD_TOKEN (a secret that did not make it into the environment) is refused, naming it', () => {
    const r = run(['dashboard', '--host', '0.0.0.0', '--port', '0', '--broker', 'redis://127.0.0.1:1'], {
      PREFORK_DASHBOARD_TOKEN: '',
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('PREFORK_DASHBOARD_TOKEN');
  });

  // A bare number is refused on the command line: "in ms" would invite the very mistake.
  it.each([
    [['enqueue', 'add', '--delay', '10x']],
    [['enqueue', 'add', '--wait', '--timeout', '0s']],
    [['control', 'ping', '--timeout', '-5s']],
    [['worker', '--app', 'x.mjs', '--lease', 'soon']],
  ])('a bad duration %j: what was expected shows a unit, and no number in ms', (args) => {
    const r = run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('with its unit');
    expect(r.stderr).not.toContain('in ms or');
  });

  it('an unknown flag is named too', () => {
    const r = run(['worker', '--app', 'x.mjs', '--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--bogus');
  });

  it('a sub-second time limit with its unit is taken', () => {
    // Both parsed (the pair check names them in ms), then refused as a pair.
    const r = run([
      'worker',
      '--app',
      fixture('worker-tasks.mjs'),
      '--time-limit',
      '300ms',
      '--soft-time-limit',
      '1.5s',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--soft-time-limit (1500 ms) must be less than --time-limit (300 ms)');
  });

  it('soft time limit not below the hard one is refused before anything starts', () => {
    const r = run([
      'worker',
      '--app',
      fixture('worker-tasks.mjs'),
      '--time-limit',
      '1s',
      '--soft-time-limit',
      '2s',
      '--broker',
      'memory://x',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--soft-time-limit/);
  });

  it('a concurrency above --max-concurrency is refused, naming both flags', () => {
    const r = run([
      'worker',
      '--app',
      fixture('worker-tasks.mjs'),
      '-c',
      '5',
      '--max-concurrency',
      '4',
      '--broker',
      'memory://x',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--concurrency: 5 .*--max-concurrency \(4\)/);
  });
});

describe('names that are Object.prototype keys are unknown names like any other: one line naming them, exit 2', () => {
  it.each([
    [['toString'], 'toString'],
    [['__proto__'], '__proto__'],
    [['worker', '--app', 'x.mjs', '--constructor'], '--constructor'],
    [['worker', '--app', 'x.mjs', '--__proto__', '1'], '--__proto__'],
    [['worker', '--app', 'x.mjs', '-O', 'toString'], "'toString'"],
    [['worker', '--app', 'x.mjs', '--queue-order', 'constructor'], "'constructor'"],
    [['worker', '--app', 'x.mjs', '--log-level', 'valueOf'], "'valueOf'"],
    [['worker', '--app', 'x.mjs', '--job-log-level', 'hasOwnProperty'], "'hasOwnProperty'"],
    [['enqueue', 'add', '--backoff', 'toString:1s'], "'toString:1s'"],
    [['enqueue', 'add', '--backoff', '{"__proto__":{"delay":1}}'], '__proto__'],
    [['inspect', 'constructor'], "'constructor'"],
    [['control', 'valueOf'], "'valueOf'"],
    [['dead', 'hasOwnProperty'], 'hasOwnProperty'],
  ])('%j', (args, named) => {
    const r = run(args);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(named);
  });

  it.each(['toString', '__proto__', 'constructor'])(
    '$PREFORK_LOG_LEVEL=%s is refused, naming the variable',
    (level) => {
      const r = run(['result', 'some-id', '--broker', 'redis://127.0.0.1:1'], { PREFORK_LOG_LEVEL: level });
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([expect.stringContaining(`$PREFORK_LOG_LEVEL: "${level}"`)]);
    },
  );
});

describe('prefork demo', () => {
  it('runs the pool on the embedded broker and prints a summary', () => {
    const r = run(['demo', '--jobs', '100', '-c', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/100\/100 settled/);
    expect(r.stdout).toMatch(/done: +\d+ succeeded, \d+ failed/);
    for (const reason of ['SyntaxError', 'TimeLimitExceeded', 'WorkerLostError']) expect(r.stdout).toContain(reason);
    expect(r.stdout).toMatch(/pid \d+/);
    // Each failure reason names the task behind it; the summary ends with what to try next.
    expect(r.stdout).toMatch(/^ +SyntaxError +\d+ +task parse: /m);
    expect(r.stdout).toMatch(/^ +TimeLimitExceeded +\d+ +task hang: ran past its 300 ms time limit/m);
    expect(r.stdout).toMatch(/^ +WorkerLostError +\d+ +task segfault: /m);
    expect(r.stdout.trimEnd().split('\n').slice(-4)[0]).toBe('next:');
  });

  it("the summary's last hint works: with PREFORK_LOG_LEVEL=info each job logs received, then its outcome", () => {
    const r = run(['demo', '--jobs', '20', '-c', '2'], { PREFORK_LOG_LEVEL: 'info' });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('PREFORK_LOG_LEVEL=info npx prefork demo --jobs 20');
    const byJob = new Map<string, string[]>();
    for (const line of r.stdout.split('\n').filter((l) => l.startsWith('{'))) {
      const { jobId, task, msg } = JSON.parse(line) as { jobId?: string; task?: string; msg: string };
      if (jobId !== undefined) byJob.set(jobId, [...(byJob.get(jobId) ?? []), msg.replace(`${task}[${jobId}]`, 'job')]);
    }
    expect(byJob.size).toBe(20);
    for (const msgs of byJob.values()) {
      expect(msgs).toHaveLength(2);
      expect(msgs[0]).toBe('job received');
      expect(msgs[1]).toMatch(/^job (succeeded|failed) in \d+ ms \(pid \d+\)/);
    }
  });
});

describe('worker, enqueue, result, dead, purge, inspect against Redis', () => {
  let url = '';
  beforeAll(async () => {
    url = await emptyRedisDb(DB);
  });

  it('a worker prints its banner, runs jobs, and stops warm on SIGTERM with exit 0', async () => {
    const worker = spawnCliWorker(
      ['--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '2', '-n', 'cli-node', '-Q', 'default,other'],
      { env: { PREFORK_TEST_LEDGER: '/dev/null' } },
    );
    await worker.ready;
    const banner = worker.stdout().split('\n')[0] ?? '';
    expect(banner).toMatch(/^prefork worker cli-node \(pid \d+\)/);
    expect(banner).toContain('queues default,other');
    expect(banner).toContain('concurrency 2');
    expect(banner).toContain('fair');

    const waited = run(['enqueue', 'add', '2', '3', '--wait', '--timeout', '20s', '--broker', url]);
    expect(waited.code).toBe(0);
    expect(waited.stdout).toMatch(/state: +SUCCESS/);
    expect(waited.stdout).toMatch(/value: +5/);

    const id = run(['enqueue', 'echo', '{"a":1}', '--queue', 'other', '--broker', url]).stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await expect
      .poll(() => run(['result', id, '--json', '--broker', url]).stdout, { message: 'the echo job finished' })
      .toContain('SUCCESS');
    expect(JSON.parse(run(['result', id, '--json', '--broker', url]).stdout)).toMatchObject({
      id,
      state: 'SUCCESS',
      value: { a: 1 },
      queue: 'other',
      node: 'cli-node',
    });

    const nodes = run(['inspect', 'nodes', '--json', '--broker', url]);
    expect((JSON.parse(nodes.stdout) as { name: string }[]).map((n) => n.name)).toContain('cli-node');

    const failed = run(['enqueue', 'noSuchTask', '--wait', '--broker', url]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/UnknownTaskError/);
    const dead = run(['dead', 'list', '--json', '--broker', url]);
    expect(dead.stdout).toContain('noSuchTask');
    expect(run(['dead', 'purge', '--broker', url]).stdout).toMatch(/purged 1 dead job/);

    expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('purge drops waiting and delayed jobs', () => {
    run(['enqueue', 'add', '1', '1', '--queue', 'nobody', '--broker', url]);
    run(['enqueue', 'add', '1', '1', '--queue', 'nobody', '--delay', '1h', '--broker', url]);
    const r = run(['purge', 'nobody', '--broker', url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/purged 2 job/);
  });

  it('result of an unknown id says PENDING', () => {
    expect(run(['result', 'no-such-id', '--broker', url]).stdout).toMatch(/PENDING/);
  });

  it('one-shot commands log to stderr: stdout stays parseable even with logging turned up', () => {
    // An unreachable broker makes the Redis connection log its failed attempt; it must not reach stdout.
    const r = run(['result', 'some-id', '--json', '--broker', 'redis://127.0.0.1:1'], { PREFORK_LOG_LEVEL: 'debug' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/"msg":"redis connection attempt failed"/);
    expect(r.stderr).toMatch(/^error: .*127\.0\.0\.1:1/m);
  });

  it('a broker that cannot be reached logs nothing but the error line, even at warn', () => {
    // A connection that never opened has no outage to report: the command's error says it all.
    const r = run(['result', 'some-id', '--broker', 'redis://127.0.0.1:1'], { PREFORK_LOG_LEVEL: 'warn' });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: .*127\.0\.0\.1:1.*ECONNREFUSED/)]);
  });

  it('a server that accepts the connection and never answers: exit 1, one line naming the URL and what did not answer', async () => {
    const held = new Set<Socket>();
    const server = createServer((socket) => {
      held.add(socket);
      socket.resume();
      socket.on('close', () => held.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      // The kernel accepts for the listener while spawnSync holds this process: nothing ever answers.
      const r = run(['enqueue', 'add', '1', '2', '--broker', `redis://127.0.0.1:${port}`]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(`^error: cannot connect to the broker at redis://127\\.0\\.0\\.1:${port}: .*did not answer`),
        ),
      ]);
    } finally {
      held.forEach((socket) => socket.destroy());
      server.close();
    }
  });

  it('a database that is not a whole number: exit 2, one line naming --broker', () => {
    const r = run(['enqueue', 'add', '1', '2', '--broker', `${url}x`]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^error: option '-b, --broker <url>' argument '.*' is invalid\. expected .*the db a whole number/,
      ),
    ]);
  });

  // Nobody typed --broker: the message names the variable, its password masked.
  it.each([
    ['junk', 'expected a redis://, rediss:// or memory:// URL'],
    ['redis://:pw@127.0.0.1:6379/abc', 'the db a whole number'],
    ['redis://127.0.0.1:6379?commandTimeout=5', 'with no URL parameter but db'],
  ])('a $PREFORK_BROKER_URL of %s: exit 2, one line naming the variable', (value, expected) => {
    for (const args of [
      ['inspect', 'queues'],
      ['worker', '--app', fixture('worker-tasks.mjs')],
    ]) {
      const r = run(args, { PREFORK_BROKER_URL: value });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines).toEqual([expect.stringContaining('$PREFORK_BROKER_URL')]);
      expect(lines[0]).toContain(expected);
      expect(lines[0]).not.toContain('--broker');
      expect(lines[0]).not.toContain(':pw@');
    }
  });

  it('a database Redis does not have: exit 1, one line naming it and what Redis said', () => {
    const r = run(['enqueue', 'add', '1', '2', '--broker', url.replace(/\/\d+$/, '/1000')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^error: the broker at .*\/1000 refused the connection: Redis has no database 1000 .*ERR DB index is out of range/,
      ),
    ]);
  });

  it("a worker on a database Redis does not have logs its fatal error with Redis's words once", () => {
    const r = run([
      'worker',
      '--app',
      fixture('worker-tasks.mjs'),
      '-c',
      '1',
      '--broker',
      url.replace(/\/\d+$/, '/1000'),
    ]);
    expect(r.code).toBe(1);
    const fatal = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; err?: { message: string; cause?: { message: string } } })
      .find((l) => l.level === 60);
    expect(fatal?.err?.message).toContain('Redis has no database 1000');
    // The cause is its own field: pino's default serializer appended its message to the error's again.
    expect(fatal?.err?.message.split('ERR DB index is out of range')).toHaveLength(2);
  });

  it('an unreachable broker is a clear one-line error, not a stack trace', () => {
    const r = run(['enqueue', 'add', '1', '--broker', 'redis://127.0.0.1:1']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/127\.0\.0\.1:1/);
  });

  afterEach(cleanup);

  it.each([
    ['SIGQUIT', ['SIGQUIT']],
    ['a second SIGINT', ['SIGINT', 'SIGINT']],
  ] as const)(
    '%s is a cold shutdown: the running job is killed and goes back to its queue, exit 0',
    async (_, signals) => {
      const ledger = newLedger();
      const queue = `cold${signals.length}`;
      const worker = spawnCliWorker(['--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '1', '-Q', queue], {
        env: { PREFORK_TEST_LEDGER: ledger },
      });
      await worker.ready;
      run(['enqueue', 'record', '60000', '--queue', queue, '--broker', url]);
      await expect.poll(() => readLedger(ledger).length, { message: 'the long job started' }).toBe(1);
      for (const signal of signals) {
        worker.proc.kill(signal);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await worker.exited).toEqual({ code: 0, signal: null });
      const broker = createBroker(url, { logger: silent });
      await broker.connect();
      try {
        expect(await broker.counts([queue])).toEqual([{ queue, waiting: 1, reserved: 0, delayed: 0, dead: 0 }]);
      } finally {
        await broker.close();
      }
    },
  );

  it("SIGTERM's log line names a cold stop that works (SIGQUIT), not a ^C that would only repeat the warm one", async () => {
    const ledger = newLedger();
    const queue = 'termhint';
    const worker = spawnCliWorker(['--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '1', '-Q', queue], {
      env: { PREFORK_TEST_LEDGER: ledger },
    });
    await worker.ready;
    run(['enqueue', 'record', '60000', '--queue', queue, '--broker', url]);
    await expect.poll(() => readLedger(ledger).length, { message: 'the long job started' }).toBe(1);
    worker.proc.kill('SIGTERM');
    await expect.poll(worker.output).toMatch(/SIGTERM: warm shutdown \(.*\)/);
    const hint = /SIGTERM: warm shutdown \((.*?)\)"/.exec(worker.output())?.[1];
    expect(hint).toContain('SIGQUIT');
    expect(hint).not.toContain('^C');
    // The way it names stops the node cold: the running job is killed and goes back to its queue.
    worker.proc.kill('SIGQUIT');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    const broker = createBroker(url, { logger: silent });
    await broker.connect();
    try {
      expect(await broker.counts([queue])).toEqual([{ queue, waiting: 1, reserved: 0, delayed: 0, dead: 0 }]);
    } finally {
      await broker.close();
    }
  });

  it('Ctrl-C in a terminal (SIGINT to the whole process group) is a warm shutdown: the running job finishes', async () => {
    const ledger = newLedger();
    const queue = 'ctrlc';
    // detached: the worker leads its own process group, as a shell's foreground job does.
    const proc = spawn(
      process.execPath,
      [CLI, 'worker', '--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '1', '-Q', queue],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
        env: { ...process.env, PREFORK_TEST_LEDGER: ledger },
      },
    );
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      proc.once('exit', (code, signal) => resolve({ code, signal })),
    );
    await expect.poll(() => out, { message: 'the worker is ready' }).toContain('worker ready');
    const id = run(['enqueue', 'record', '500', '--queue', queue, '--broker', url]).stdout.trim();
    await expect.poll(() => readLedger(ledger).length, { message: 'the job started' }).toBe(1);
    process.kill(-proc.pid!, 'SIGINT');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(JSON.parse(run(['result', id, '--json', '--broker', url]).stdout)).toMatchObject({ id, state: 'SUCCESS' });
  });
});
