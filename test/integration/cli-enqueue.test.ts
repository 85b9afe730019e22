/**
 * `prefork enqueue` with every per-job option, the mistakes the CLI refuses
 * (naming the flag as typed), `--wait` on a queue nobody consumes, `dead
 * retry` of an id that is not dead, and one `--json` convention.
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cleanup, emptyRedisDb, fixture, newLedger, spawnCliWorker } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const DB = 11;

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function usageError(args: string[]): string {
  const r = run(args);
  expect(r.code).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('enqueue and worker flags: mistakes are one line naming the flag, exit 2', () => {
  it.each([
    [['enqueue', 'add', '--eta', 'tomorrow'], "'--eta <time>' argument 'tomorrow'"],
    // Epoch seconds (date +%s) read as ms are 1970: the job would run at once.
    [['enqueue', 'add', '--eta', '1767225600'], 'for epoch seconds write 1767225600000'],
    // Date.parse reads these, wrongly: a day that does not exist rolls over, a negative number is 2001.
    [['enqueue', 'add', '--eta', '2030-02-30T09:00:00Z'], "'--eta <time>' argument '2030-02-30T09:00:00Z'"],
    [['enqueue', 'add', '--eta', '2030-04-31'], "'--eta <time>' argument '2030-04-31'"],
    [['enqueue', 'add', '--eta', '-5'], "'--eta <time>' argument '-5'"],
    [['enqueue', 'add', '--eta', '1 2'], "'--eta <time>' argument '1 2'"],
    [['enqueue', 'add', '--backoff', 'fixed:later'], "'--backoff <spec>' argument 'fixed:later'"],
    [['enqueue', 'add', '--backoff', 'linear'], "'--backoff <spec>' argument 'linear'"],
    [['enqueue', 'add', '--backoff', '{"type":"fixd"}'], '\'--backoff <spec>\' argument \'{"type":"fixd"}\''],
    [['enqueue', 'add', '--id', ''], "'--id <id>' argument ''"],
    [['enqueue', 'add', '--time-limit', '30d'], "'--time-limit <duration>' argument '30d'"],
    [['enqueue', 'add', '--soft-time-limit', 'soon'], "'--soft-time-limit <duration>' argument 'soon'"],
    [['enqueue', 'add', '--wait', '--timeout', 'forever'], "'--timeout <duration>' argument 'forever'"],
    [['control', 'ping', '--timeout', '30d'], "'--timeout <duration>' argument '30d'"],
    [['worker', '--app', 'x.mjs', '--node-arg', 'tsx'], "'--node-arg <flag>' argument 'tsx'"],
    // Past 100 years: refused here, as typed (the library saw 8.639999999999999e+30 ms).
    [
      ['enqueue', 'add', '--delay', '99999999999999999999999d'],
      "'--delay <duration>' argument '99999999999999999999999d'",
    ],
    // The task is an argument, not a --name flag.
    [['enqueue', '', '1', '2'], "argument 'task'"],
  ])('%j', (args, named) => {
    expect(usageError(args)).toContain(named);
  });

  it.each([['{a:1}'], ['[1,'], ['"open']])('an argument that looks like JSON but does not parse: %s', (arg) => {
    const line = usageError(['enqueue', 'echo', arg]);
    expect(line).toContain(`argument '${arg}'`);
    expect(line).toContain('does not parse');
  });

  it.each([['1e400'], ['[1,{"a":-1e999}]']])('an argument holding a number past a double: %s', (arg) => {
    const line = usageError(['enqueue', 'echo', arg]);
    expect(line).toContain(`argument '${arg}'`);
    expect(line).toContain('too large for a double');
  });

  it('names no flag that does not exist, and words nothing of what was expected as a flag', () => {
    const task = usageError(['enqueue', '', '1', '2']);
    expect(task).not.toContain('--name');
    expect(task).toContain('expected a task name');
    // An empty task for control rate-limit is the task's fault, not the rate's.
    const rate = usageError(['control', 'rate-limit', '', '5/s']);
    expect(rate).toContain("argument '' is invalid");
    expect(rate).not.toContain("'5/s'");
  });

  it('a soft limit not below the hard one names both flags, for enqueue and for the worker', () => {
    for (const command of [
      ['enqueue', 'add'],
      ['worker', '--app', fixture('worker-tasks.mjs'), '--broker', 'memory://x'],
    ]) {
      const line = usageError([...command, '--time-limit', '1s', '--soft-time-limit', '2s']);
      expect(line).toContain('--soft-time-limit (2000 ms)');
      expect(line).toContain('--time-limit (1000 ms)');
      expect(line).not.toMatch(/softTimeLimit|timeLimit/);
    }
  });

  it('-c with --autoscale is refused, saying why', () => {
    const line = usageError(['worker', '--app', fixture('worker-tasks.mjs'), '-c', '2', '--autoscale', '4,1']);
    expect(line).toContain('-c/--concurrency or --autoscale, not both');
  });

  it.each([
    [['enqueue', 'add', '--delay', '1s', '--eta', '2030-01-31T09:00:00Z'], '--delay or --eta'],
    [['enqueue', 'add', '--wait', '--ignore-result'], '--ignore-result'],
    [['enqueue', 'add', '--timeout', '5s'], 'add --wait'],
  ])('%j is refused', (args, says) => {
    expect(usageError(args)).toContain(says);
  });

  it('--timeout shows a duration with its unit, and its default with one', () => {
    for (const command of [['control'], ['inspect']]) {
      const help = run([...command, '--help']).stdout.replace(/\s+/g, ' ');
      expect(help).toContain('(e.g. 5s)');
      expect(help).toContain('(default: 12s)');
    }
    expect(run(['enqueue', '--help']).stdout.replace(/\s+/g, ' ')).toContain('(e.g. 30s, 5m; default: no limit)');
  });
});

// Each test runs several commands one after the other: on a loaded machine that takes a while.
describe('enqueue options against a worker on Redis', { timeout: 120_000 }, () => {
  let url = '';
  beforeAll(async () => {
    url = await emptyRedisDb(DB);
    await spawnCliWorker(['--app', fixture('worker-tasks.mjs'), '--broker', url, '-c', '1'], {
      env: { PREFORK_TEST_LEDGER: newLedger() },
    }).ready;
  });
  afterAll(cleanup);

  const result = (id: string): Record<string, unknown> =>
    JSON.parse(run(['result', id, '--json', '--broker', url]).stdout) as Record<string, unknown>;

  it('--id, --retries and --backoff: the job runs under that id and is retried as asked', () => {
    const r = run([
      'enqueue',
      'flaky',
      '"cli-backoff"',
      '3',
      '--id',
      'my-own-id',
      '--retries',
      '2',
      '--backoff',
      'fixed:10ms',
      '--wait',
      '--timeout',
      '20s',
      '--json',
      '--broker',
      url,
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: 'my-own-id', state: 'SUCCESS', value: 3, retries: 2 });
  });

  it('--time-limit fails a job that overruns it', () => {
    const r = run(['enqueue', 'record', '10000', '--time-limit', '300ms', '--wait', '--json', '--broker', url]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'FAILURE', error: { name: 'TimeLimitExceeded' } });
  });

  it('--soft-time-limit aborts the job before the hard one', () => {
    const r = run([
      'enqueue',
      'waitForAbort',
      '10000',
      '--soft-time-limit',
      '200ms',
      '--time-limit',
      '20s',
      '--wait',
      '--json',
      '--broker',
      url,
    ]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'FAILURE', error: { name: 'SoftTimeLimitExceeded' } });
  });

  it('--ignore-result runs the job and stores nothing', () => {
    const marker = run(['enqueue', 'echo', '1', '--ignore-result', '--broker', url]).stdout.trim();
    // A job enqueued after it on the same queue and node finishes after it (one child, fair).
    const after = run(['enqueue', 'echo', '2', '--wait', '--json', '--broker', url]);
    expect(JSON.parse(after.stdout)).toMatchObject({ state: 'SUCCESS' });
    // Nothing stored, and the job left its queue: the broker knows nothing of it.
    expect(result(marker)).toEqual({ id: marker, state: 'PENDING', unknown: true });
  });

  it('a task defined with ignoreResult: --wait and result say its value was not kept; --no-ignore-result keeps it', () => {
    const waited = run(['enqueue', 'quiet', '5', '--wait', '--json', '--broker', url]);
    expect(waited.code).toBe(0);
    const record = JSON.parse(waited.stdout) as Record<string, unknown>;
    expect(record).toMatchObject({ state: 'SUCCESS', ignoreResult: true });
    expect(record).not.toHaveProperty('value');
    const shown = run(['result', record.id as string, '--broker', url]).stdout;
    expect(shown).toContain('state:    SUCCESS');
    expect(shown).toContain('result:   not kept: task "quiet" is defined with ignoreResult');
    const kept = run(['enqueue', 'quiet', '5', '--no-ignore-result', '--wait', '--json', '--broker', url]);
    expect(JSON.parse(kept.stdout)).toMatchObject({ state: 'SUCCESS', value: 5 });
  });

  it('--eta in the future waits in the delayed set; one now runs', () => {
    const later = new Date(Date.now() + 3_600_000).toISOString();
    run(['enqueue', 'echo', '1', '--queue', 'eta-later', '--eta', later, '--broker', url]);
    const queues = JSON.parse(run(['inspect', 'queues', '--json', '--broker', url]).stdout) as {
      queue: string;
      delayed: number;
    }[];
    expect(queues.find((q) => q.queue === 'eta-later')).toMatchObject({ delayed: 1 });
    const now = run(['enqueue', 'echo', '7', '--eta', String(Date.now()), '--wait', '--json', '--broker', url]);
    expect(JSON.parse(now.stdout)).toMatchObject({ state: 'SUCCESS', value: 7 });
  });

  it('--wait on a queue no live node consumes warns on stderr, and the job stays queued', () => {
    const r = run(['enqueue', 'echo', '1', '--queue', 'nobody-here', '--wait', '--timeout', '1s', '--broker', url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^warning: no live worker node consumes queue nobody-here/m);
    expect(r.stderr).toMatch(/no result for job .* within 1000 ms/);
    const served = run(['enqueue', 'echo', '1', '--wait', '--timeout', '20s', '--broker', url]);
    expect(served.stderr).toBe('');
  });

  it.each(['SIGINT', 'SIGTERM'] as const)(
    '--wait stopped by %s says which job it leaves enqueued, and the job is there',
    async (signal) => {
      const child = spawn(process.execPath, [
        CLI,
        'enqueue',
        'echo',
        '1',
        '--queue',
        'nobody-waits',
        '--wait',
        '--broker',
        url,
      ]);
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      await vi.waitFor(() => expect(stderr).toMatch(/^warning: /m), { timeout: 30_000 });
      child.kill(signal);
      expect(await exited).toBe(signal === 'SIGINT' ? 130 : 143);
      const id = /job ([0-9a-f-]{36})/.exec(stderr)?.[1];
      expect(id, stderr).toBeDefined();
      expect(stderr).toContain(`prefork result ${id}`);
      expect(result(id!)).toMatchObject({ state: 'PENDING', queue: 'nobody-waits' });
      expect(run(['purge', 'nobody-waits', '--broker', url]).code).toBe(0);
    },
  );

  it('dead retry: a known id is requeued, an unknown one is named and exits 1', () => {
    expect(run(['enqueue', 'noSuchTask', '--wait', '--broker', url]).code).toBe(1);
    const list = JSON.parse(run(['dead', 'list', '--json', '--broker', url]).stdout) as { id: string }[];
    expect(Array.isArray(list)).toBe(true);
    expect(list.length).toBeGreaterThan(0);
    const known = list[0]!.id;
    const r = run(['dead', 'retry', known, 'not-a-dead-id', '--broker', url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('requeued 1 dead job(s)\n');
    expect(r.stderr).toBe('error: not in the dead set: not-a-dead-id\n');
    expect(run(['dead', 'retry', 'not-a-dead-id', '--broker', url]).code).toBe(1);
    const json = run(['dead', 'retry', 'not-a-dead-id', '--json', '--broker', url]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ requeued: 0, notDead: ['not-a-dead-id'] });
  });

  it('--json is one JSON document for every command: an array for a list, an object for one thing', () => {
    for (const args of [
      ['dead', 'list'],
      ['inspect', 'nodes'],
      ['inspect', 'queues'],
      ['inspect', 'stats'],
      ['control', 'ping'],
    ]) {
      const out = run([...args, '--json', '--broker', url]).stdout;
      expect(out.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(Array.isArray(JSON.parse(out)), args.join(' ')).toBe(true);
    }
    for (const args of [
      ['enqueue', 'echo', '1'],
      ['result', 'some-id'],
      ['purge', 'json-none'],
      ['dead', 'retry', '--all', '--queue', 'json-none'],
      ['dead', 'purge', '--queue', 'json-none'],
    ]) {
      const out = run([...args, '--json', '--broker', url]).stdout;
      expect(out.trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(out)).toBeTypeOf('object');
      expect(Array.isArray(JSON.parse(out))).toBe(false);
    }
  });
});
