/**
 * A Redis that stops answering once the connection is up: frozen (SIGSTOP),
 * or holding the command (CLIENT PAUSE WRITE, as a failover does). A
 * Client's one-shot calls, and every one-shot CLI command, fail within
 * their bound (commandTimeout) with BrokerTimeoutError instead of waiting
 * for ever, saying that what was sent may or may not have been applied;
 * once Redis answers again the same client works, each late reply going to
 * the call it answers. A wait ends at its own timeout, and close() ends
 * too. A Worker on the same Redis, whose calls are never bounded, rides
 * out the freeze and drains every job. Freezing is server-wide, so each
 * test has a redis-server of its own.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BrokerTimeoutError, BrokerUnavailableError, ClientClosedError, ResultTimeoutError } from 'prefork';
import { createBroker } from 'prefork/broker';
import { ownRedisPerTest } from '../helpers/own-redis.js';
import { waitUntil } from '../helpers/wait.js';
import { captureLog, makeClient, makeWorker, newLedger, readLedger, silent, uniqueName } from '../helpers/worker.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const own = ownRedisPerTest();

/** The message of a call whose command Redis left unanswered for `ms`. */
function timedOut(what: string, ms: number): string {
  return (
    `the broker at ${own.server.url} did not answer ${what} within ${ms} ms ` +
    '(commandTimeout; a Redis that is stopped, overloaded or out of reach): what was sent may or may not have been applied'
  );
}

/** Runs the CLI; resolves with how it ended. A CLI that hangs is killed after `killAfterMs` (status null). */
function cli(args: string[], killAfterMs: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return new Promise((resolve) =>
    child.once('close', (status) => {
      clearTimeout(killer);
      resolve({ status, stdout, stderr });
    }),
  );
}

/** The names of the connections Redis has now. */
async function connectionNames(): Promise<string[]> {
  const list = (await own.raw.client('LIST')) as string;
  return [...list.matchAll(/ name=(\S*)/g)].map((m) => m[1] as string);
}

describe('a Client on a Redis that is frozen once connected', () => {
  it('fails an enqueue, a bulk enqueue and reads with BrokerTimeoutError; resumed, the same client works and each late reply goes to its own call', async () => {
    const namespace = uniqueName('ns');
    const client = makeClient(own.server.url, namespace, { commandTimeout: 300 });
    await client.enqueue('add', [1, 1], { id: 'job-a', queue: 'qa' });
    await client.enqueue('add', [2, 2], { id: 'job-b', queue: 'qb' });
    own.server.pause();

    const err = await client.enqueue('add', [3, 3], { id: 'job-c', queue: 'qc' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrokerTimeoutError);
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect(err).toMatchObject({ code: 'PREFORK_BROKER_TIMEOUT', url: own.server.url, timeoutMs: 300 });
    expect((err as Error).message).toBe(timedOut('the script enqueueOnce', 300));
    // Nothing of the batch was confirmed: the timeout as it came (no EnqueueIncompleteError).
    const bulk = client.enqueueMany([
      { name: 'add', args: [4, 4], options: { queue: 'qd' } },
      { name: 'add', args: [5, 5], options: { queue: 'qd' } },
    ]);
    await expect(bulk).rejects.toThrow(timedOut('the script enqueueJobs', 300));
    // Reads: a job's state (the late reply of its first command names queue qa), a stored result.
    await expect(client.getState('job-a')).rejects.toBeInstanceOf(BrokerTimeoutError);
    await expect(client.getResult('job-b')).rejects.toThrow(timedOut('the command GET', 300));

    own.server.resume();
    // Had a late reply gone to the next command, job-b would be read as in qa.
    expect(await client.getState('job-b')).toMatchObject({ id: 'job-b', state: 'PENDING', queue: 'qb' });
    expect(await client.getState('job-a')).toMatchObject({ id: 'job-a', state: 'PENDING', queue: 'qa' });
    // "May or may not": Redis ran what it had received once it resumed.
    expect(await client.getState('job-c')).toMatchObject({ id: 'job-c', state: 'PENDING', queue: 'qc' });
    const after = await client.enqueue('add', [6, 6], { queue: 'qe' });
    expect(await after.state()).toMatchObject({ id: after.id, state: 'PENDING', queue: 'qe' });
  });

  it('a result() wait ends at its own timeout, and close() ends while Redis is still frozen', async () => {
    const client = makeClient(own.server.url, uniqueName('ns'), { commandTimeout: 300 });
    const job = await client.enqueue('add', [1, 2]);
    own.server.pause();
    await expect(job.result({ timeout: 1_000 })).rejects.toBeInstanceOf(ResultTimeoutError);
    // Its QUIT is never answered: after 1 s of Redis's silence the socket is closed.
    await client.close();
  });

  it('a result() wait that waits for the client to connect still ends at its own timeout', async () => {
    // Frozen before the client's first call: the TCP connect succeeds, the handshake is never answered.
    own.server.pause();
    const client = makeClient(own.server.url, uniqueName('ns'));
    const err = await client
      .handle('job-1')
      .result({ timeout: 500 })
      .catch((e: unknown) => e);
    // Before, the wait waited out the connect's own bound (10 s) and failed with BrokerUnavailableError.
    expect(err).toBeInstanceOf(ResultTimeoutError);
    expect(err).toMatchObject({ jobId: 'job-1' });
  });

  it('close() ends while Redis is frozen even with no bound: Redis silent, the socket is closed instead of waiting for the QUIT', async () => {
    // No commandTimeout: nothing bounds the QUIT, nor the CLIENT UNBLOCK that ends the wait's block.
    // Before Redis had to answer them, and this close() waited until it resumed (here: never, in the test).
    const client = makeClient(own.server.url, uniqueName('ns'), { commandTimeout: false });
    const job = await client.enqueue('add', [1, 2]);
    const waiting = job.result().catch((e: unknown) => e);
    await waitUntil(async () => (await connectionNames()).includes('prefork:result-wait'), 'the client waits');
    own.server.pause();
    // A call on the wire when the client closes: cut with the socket, it says what that means.
    const inFlight = client.enqueue('add', [3, 4], { id: 'cut-by-close' }).catch((e: unknown) => e);
    await client.close();
    // Reached with Redis still frozen (it is thawed only after the test): the close did not wait for it.
    expect(await waiting).toBeInstanceOf(ClientClosedError);
    const cut = await inFlight;
    expect(cut).toBeInstanceOf(BrokerUnavailableError);
    expect((cut as Error).message).toBe(
      `cannot connect to the broker at ${own.server.url}: the connection closed before Redis answered: what was sent may or may not have been applied`,
    );
  });
});

describe('a one-shot CLI command on a Redis that stops answering once connected', () => {
  // Reads go through (the connect, INFO, the list of queues); the writes and scripts each command sends wait.
  it('exits 1 with one line naming the broker, the bound and that it may have been applied; it does not hang', async () => {
    // A queue to inspect.
    await makeClient(own.server.url).enqueue('add', [1, 1]);
    await own.raw.call('CLIENT', 'PAUSE', '60000', 'WRITE');
    try {
      const [enqueued, inspected] = await Promise.all([
        cli(['enqueue', 'add', '1', '2', '--broker', own.server.url], 40_000),
        cli(['inspect', 'queues', '--broker', own.server.url], 40_000),
      ]);
      expect(enqueued.stderr).toBe(`error: ${timedOut('the script enqueueJobs', 10_000)}\n`);
      expect(enqueued.stdout).toBe('');
      expect(enqueued.status).toBe(1);
      expect(inspected.stderr).toBe(`error: ${timedOut('the script countJobs', 10_000)}\n`);
      expect(inspected.status).toBe(1);
    } finally {
      await own.raw.call('CLIENT', 'UNPAUSE');
    }
  });

  it('enqueue --wait, frozen during the wait: it ends at --timeout and exits 1', async () => {
    const run = cli(['enqueue', 'add', '1', '2', '--wait', '--timeout', '1s', '--broker', own.server.url], 50_000);
    await waitUntil(async () => (await connectionNames()).includes('prefork:result-wait'), 'the command waits');
    own.server.pause();
    const { status, stderr } = await run;
    expect(stderr).toMatch(/^error: no result for job \S+ within 1000 ms$/m);
    expect(status).toBe(1);
  });
});

describe('a Worker on a Redis frozen mid-drain', () => {
  it("is not bounded: it drains every job once, none lost or dead, while a client's call times out", async () => {
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    const { log, lines } = captureLog();
    const worker = makeWorker({ broker: own.server.url, namespace, ledger, concurrency: 2, logger: log });
    await worker.start();
    const client = makeClient(own.server.url, namespace, { commandTimeout: 300 });
    const jobs = await client.enqueueMany(Array.from({ length: 100 }, () => ({ name: 'record', args: [30] })));
    await waitUntil(() => readLedger(ledger).length >= 5, 'the node drains the queue');

    own.server.pause();
    try {
      // The bound is on in this process: the client's call fails, the node's calls wait.
      await expect(client.enqueue('add', [1, 1])).rejects.toBeInstanceOf(BrokerTimeoutError);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
    } finally {
      own.server.resume();
    }

    expect(await Promise.all(jobs.map((j) => j.result({ timeout: 60_000 })))).toEqual(jobs.map((j) => j.id));
    // Each ran once: no fetch was cut (its reservations would be stranded), no lease ran out.
    expect(
      readLedger(ledger)
        .map((r) => r.id)
        .sort(),
    ).toEqual(jobs.map((j) => j.id).sort());
    expect(lines.filter((l) => JSON.stringify(l).includes('PREFORK_BROKER_TIMEOUT'))).toEqual([]);
    const admin = createBroker(own.server.url, { namespace, logger: silent });
    await admin.connect();
    try {
      await expect
        .poll(async () => (await admin.counts(['default']))[0], { message: 'the queue is drained, nothing dead' })
        .toMatchObject({ waiting: 0, reserved: 0, delayed: 0, dead: 0 });
    } finally {
      await admin.close();
    }
  });
});

/**
 * What a stop that gave up on Redis leaves running (a beat, an unregister, a fetch) fails when the
 * broker closes, just after "worker stopped": it says nothing at warn or above (a retry that never
 * comes, a failure already logged). Waits a moment for those failures to come.
 */
async function afterStopping(lines: Record<string, unknown>[]): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 500));
  const stopped = lines.findIndex((l) => l.msg === 'worker stopped');
  expect(stopped).toBeGreaterThan(-1);
  expect(lines.slice(stopped + 1).filter((l) => Number(l.level) >= 40)).toEqual([]);
}

describe('a Worker stopped warm on a frozen Redis', () => {
  // Its calls are never bounded (a freeze mid-drain is ridden out), but a stop must end: what Redis
  // does not answer is left to the node's lease, as docs/failure-modes.md says.
  it('idle, blocked waiting for work: the stop ends while Redis is still frozen', async () => {
    const namespace = uniqueName('ns');
    const { log, lines } = captureLog();
    const worker = makeWorker({ broker: own.server.url, namespace, logger: log });
    await worker.start();
    const job = await makeClient(own.server.url, namespace).enqueue('add', [1, 2]);
    expect(await job.result({ timeout: 10_000 })).toBe(3);
    await waitUntil(async () => (await connectionNames()).includes('prefork:work-wait'), 'the node blocks');
    own.server.pause();
    // The block's CLIENT UNBLOCK and the node's leaving go unanswered: before, this waited until Redis resumed.
    await worker.stop();
    await afterStopping(lines);
  });

  it('busy, its next fetch unanswered: the stop ends while frozen, and once Redis resumes every job runs', async () => {
    const namespace = uniqueName('ns');
    const ledger = newLedger();
    // A short lease: what it held comes back soon after the stop.
    const { log, lines } = captureLog();
    const worker = makeWorker({ broker: own.server.url, namespace, ledger, concurrency: 2, lease: 2_000, logger: log });
    await worker.start();
    const client = makeClient(own.server.url, namespace);
    const jobs = await client.enqueueMany(Array.from({ length: 200 }, () => ({ name: 'record', args: [20] })));
    await waitUntil(() => readLedger(ledger).length >= 10, 'the node drains the queue');
    own.server.pause();
    // The jobs it held finish; the fetch that would bring more is on the wire, unanswered.
    await waitUntil(
      () => worker.stats().pool.processes.every((p) => p.state === 'idle') && worker.stats().pool.reserved === 0,
      'the jobs held finish',
    );
    await worker.stop({ deadline: 500 });
    await afterStopping(lines);
    own.server.resume();

    // What the stopped node held unconfirmed comes back with its lease (at least once): all run.
    const second = makeWorker({ broker: own.server.url, namespace, ledger, concurrency: 2 });
    await second.start();
    expect(await Promise.all(jobs.map((j) => j.result({ timeout: 60_000 })))).toEqual(jobs.map((j) => j.id));
    expect(new Set(readLedger(ledger).map((r) => r.id))).toEqual(new Set(jobs.map((j) => j.id)));
  }, 60_000);
});
