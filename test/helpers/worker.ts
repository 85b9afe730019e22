/**
 * Helpers for the Worker's integration tests: a fresh namespace per test,
 * in-process workers and clients that are always stopped, worker nodes in
 * their own processes (a fixture script, or the `prefork worker` CLI), and
 * the ledger that task `record` appends to.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { Client, Worker, type ClientOptions, type WorkerOptions } from 'prefork';
import { inject } from 'vitest';
import type { Broker, QueueCounts } from '../../dist/broker/types.js';
import '../setup/provided.js';
import { WAIT } from './wait.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
export const silent = pino({ level: process.env.PREFORK_TEST_LOG ?? 'silent' });
const stoppers: (() => Promise<unknown>)[] = [];

/** A pino logger whose lines (parsed) land in `lines`, for tests that assert what was logged. */
export function captureLog(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

/** The queue counts seen by a Client's own broker (a Client holds the admin role too, though its type does not say so). */
export function countsOf(client: Client, queues: string[]): Promise<QueueCounts[]> {
  return (client.broker as Broker).counts(queues);
}

export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

/** A broker URL for this test: its own memory:// broker, or the shared Redis (isolated by `namespace`). */
export function brokerFor(kind: 'memory' | 'redis', redisUrl: string): string {
  return kind === 'memory' ? `memory://${uniqueName('t')}` : redisUrl;
}

/**
 * The URL of database `db` on the test setup's Redis, emptied first: a CLI
 * test file gets a database of its own (its commands see every key in it).
 */
export async function emptyRedisDb(db: number): Promise<string> {
  const url = `${inject('redisUrl')}/${db}`;
  const redis = new Redis(url);
  await redis.flushdb();
  redis.disconnect();
  return url;
}

/** A ledger file; tasks append to it through $PREFORK_TEST_LEDGER (set on the children via pool.env). */
export function newLedger(): string {
  const dir = mkdtempSync(join(tmpdir(), 'prefork-test-'));
  stoppers.push(() => {
    rmSync(dir, { recursive: true, force: true });
    return Promise.resolve();
  });
  return join(dir, 'ledger');
}

/** Lines of the ledger: [jobId, queue, epochMs]. */
export function readLedger(file: string): { id: string; queue: string; at: number }[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id = '', queue = '', at = '0'] = line.split(' ');
      return { id, queue, at: Number(at) };
    });
}

export function makeWorker(
  options: Partial<WorkerOptions> & { broker: NonNullable<WorkerOptions['broker']>; ledger?: string },
): Worker {
  const { ledger, ...rest } = options;
  const worker = new Worker({
    app: fixture('worker-tasks.mjs'),
    concurrency: 2,
    logger: silent,
    ...rest,
    pool: { ...(rest.pool ?? {}), env: { PREFORK_TEST_LEDGER: ledger ?? '/dev/null', ...(rest.pool?.env ?? {}) } },
  });
  stoppers.push(() => worker.stop({ cold: true }).catch(() => undefined));
  return worker;
}

export function makeClient(broker: string, namespace?: string, options: Partial<ClientOptions> = {}): Client {
  const client = new Client({ broker, namespace, logger: silent, ...options });
  stoppers.push(() => client.close());
  return client;
}

/** afterEach: stop every worker and client this test made, and kill its node processes. */
export async function cleanup(): Promise<void> {
  for (const stop of stoppers.splice(0).reverse()) await stop();
}

/** How a process ended, as its 'exit' event says. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface NodeProcess {
  proc: ChildProcess;
  nodeId: string;
  exited: Promise<ProcessExit>;
}

/** A worker node in its own process (test/fixtures/worker-node.mjs, or `script`); resolves once it consumes. */
export function startNode(
  options: Record<string, unknown>,
  ledger: string,
  script = 'worker-node.mjs',
): Promise<NodeProcess> {
  const proc = spawn(
    process.execPath,
    [fixture(script), JSON.stringify({ app: fixture('worker-tasks.mjs'), ...options })],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, PREFORK_TEST_LEDGER: ledger },
    },
  );
  const exited = new Promise<ProcessExit>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  stoppers.push(async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    await exited;
  });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /ready (\S+)/.exec(out);
      if (m) resolve({ proc, nodeId: m[1] as string, exited });
    });
    void exited.then(({ code, signal }) =>
      reject(new Error(`worker node exited before it was ready (code ${code}, signal ${signal})`)),
    );
  });
}

export interface CliWorker {
  proc: ChildProcess;
  /** What it has written to stdout so far (its banner first, then its log lines). */
  stdout: () => string;
  /** Its stdout and stderr so far, interleaved as they arrived. */
  output: () => string;
  /**
   * Resolves once it logs "worker ready". Rejects, with its output, if it
   * exits first or is not ready within WAIT.timeout (a hang, not a speed).
   */
  ready: Promise<void>;
  /** Resolves when it exits (the 'exit' event, as a test asserting the exit status waits for). */
  exited: Promise<ProcessExit>;
  /** Sends `signal` (SIGTERM: a warm stop) and resolves with how it exited. */
  stop: (signal?: NodeJS.Signals) => Promise<ProcessExit>;
}

/**
 * `prefork worker <args>` (node dist/cli/main.js) in a child process, its
 * environment this one's plus `env`, `nodeArgs` given to node itself. Its stdout and stderr are collected
 * (both are read, so neither pipe can fill and block it). Killed, if it
 * still runs, by cleanup().
 */
export function spawnCliWorker(
  args: string[],
  options: { env?: Record<string, string>; nodeArgs?: string[] } = {},
): CliWorker {
  const proc = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, 'worker', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  let stdout = '';
  let output = '';
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    output += chunk;
  });
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<ProcessExit>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  stoppers.push(async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    await exited;
  });
  const ready = new Promise<void>((resolve, reject) => {
    const fail = (why: string): void => reject(new Error(`prefork worker ${why}; its output:\n${output}`));
    const timer = setTimeout(() => fail(`was not ready within ${WAIT.timeout} ms`), WAIT.timeout);
    proc.stdout.on('data', () => {
      if (!stdout.includes('worker ready')) return;
      clearTimeout(timer);
      resolve();
    });
    // 'close', not 'exit': by then all of its output has been read, so the error shows why it ended.
    proc.once('close', (code, signal) => {
      clearTimeout(timer);
      fail(`exited before it was ready (code ${code}, signal ${signal})`);
    });
  });
  return {
    proc,
    stdout: () => stdout,
    output: () => output,
    ready,
    exited,
    stop: (signal = 'SIGTERM') => {
      proc.kill(signal);
      return exited;
    },
  };
}
