/**
 * The child's side of the pipe protocol, driven by hand: a real child process
 * (dist/child/main.js) with frames written to its inq and read from its outq.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeBody } from '../../dist/protocol/codec.js';
import { encodeFrame } from '../../dist/protocol/frame-encoder.js';
import { FrameDecoder } from '../../dist/protocol/frame-decoder.js';
import { CHILD_CONFIG_ENV, MessageType } from '../../dist/protocol/messages.js';
import { fixture } from '../helpers/pool.js';
import { waitUntil } from '../helpers/wait.js';

const CHILD_MAIN = fileURLToPath(new URL('../../dist/child/main.js', import.meta.url));
const spawned: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of spawned.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Driven {
  child: ChildProcess;
  /** Every message the child sent so far, as decoded tuples. */
  messages: unknown[][];
  /** Resolves with the first message (from now on or already received) that `accept` takes. */
  next(accept: (msg: unknown[]) => boolean): Promise<unknown[]>;
  send(...frames: unknown[][]): void;
  /** Writes raw bytes to inq; resolves once the pipe has them. */
  write(bytes: Buffer): Promise<void>;
  exited: Promise<number | null>;
}

function startChild(app = 'tasks-basic.mjs', env: Record<string, string> = {}): Driven {
  const child = spawn(process.execPath, [CHILD_MAIN], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: {
      ...process.env,
      ...env,
      [CHILD_CONFIG_ENV]: JSON.stringify({
        app: fixture(app),
        maxFrameSize: 1 << 20,
        reportMemory: false,
      }),
    },
  });
  spawned.push(child);
  const messages: unknown[][] = [];
  const waiters: { accept: (msg: unknown[]) => boolean; resolve: (msg: unknown[]) => void }[] = [];
  const decoder = new FrameDecoder(1 << 20);
  child.stdout.on('data', (chunk: Buffer) =>
    decoder.push(chunk, (body) => {
      const msg = decodeBody(body) as unknown[];
      messages.push(msg);
      for (const w of [...waiters]) {
        if (w.accept(msg)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(msg);
        }
      }
    }),
  );
  return {
    child,
    messages,
    next: (accept) => {
      const seen = messages.find(accept);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ accept, resolve }));
    },
    send: (...frames) => {
      child.stdin.write(Buffer.concat(frames.map((f) => encodeFrame(f))));
    },
    write: (bytes) =>
      new Promise((resolve, reject) => child.stdin.write(bytes, (err) => (err ? reject(err) : resolve()))),
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
}

const job = (seq: number, name: string, args: unknown[] = []): unknown[] => [MessageType.JOB, seq, name, args, null];
const kinds = (messages: unknown[][]): unknown[][] =>
  messages.filter((m) => m[0] !== MessageType.WORKER_UP).map((m) => [m[0], m[1]]);

describe('a child after SHUTDOWN', () => {
  it('still reads inq: a SOFT_TIMEOUT for its running job arrives, and a JOB sent after SHUTDOWN comes back WITHDRAWN; then it exits 0', async () => {
    const c = startChild();
    await c.next((m) => m[0] === MessageType.WORKER_UP);
    c.send(
      job(1, 'awaitAbort'),
      job(2, 'echo', ['queued before SHUTDOWN']),
      [MessageType.SHUTDOWN],
      job(3, 'echo', ['after SHUTDOWN']),
    );
    await c.next((m) => m[0] === MessageType.WITHDRAWN);
    c.send([MessageType.SOFT_TIMEOUT, 1]);
    expect(await c.exited).toBe(0);
    expect(kinds(c.messages)).toEqual([
      [MessageType.ACK, 1],
      [MessageType.WITHDRAWN, [3]],
      [MessageType.RESULT_ERROR, 1],
      [MessageType.ACK, 2],
      [MessageType.RESULT_OK, 2],
    ]);
    const failed = c.messages.find((m) => m[0] === MessageType.RESULT_ERROR) as [number, number, { name: string }];
    expect(failed[2].name).toBe('SoftTimeLimitExceeded');
  });
});

describe('WITHDRAW', () => {
  it('gives back every job received and not started, in order; the running one goes on; later jobs run', async () => {
    const c = startChild();
    await c.next((m) => m[0] === MessageType.WORKER_UP);
    c.send(job(1, 'awaitAbort'), job(2, 'echo', [2]), job(3, 'echo', [3]), [MessageType.WITHDRAW], job(4, 'echo', [4]));
    await c.next((m) => m[0] === MessageType.WITHDRAWN);
    c.send([MessageType.SOFT_TIMEOUT, 1], [MessageType.SHUTDOWN]);
    expect(await c.exited).toBe(0);
    expect(kinds(c.messages)).toEqual([
      [MessageType.ACK, 1],
      [MessageType.WITHDRAWN, [2, 3]],
      [MessageType.RESULT_ERROR, 1],
      [MessageType.ACK, 4],
      [MessageType.RESULT_OK, 4],
    ]);
  });

  it('with nothing waiting, sends nothing', async () => {
    const c = startChild();
    await c.next((m) => m[0] === MessageType.WORKER_UP);
    c.send([MessageType.WITHDRAW], job(1, 'echo', [1]), [MessageType.SHUTDOWN]);
    expect(await c.exited).toBe(0);
    expect(kinds(c.messages)).toEqual([
      [MessageType.ACK, 1],
      [MessageType.RESULT_OK, 1],
    ]);
  });
});

/** Paths in a new temp directory (removed after the test): files `spinUntil` waits for and creates. */
function tempFiles(): (name: string) => string {
  const dir = mkdtempSync(join(tmpdir(), 'prefork-read-on-'));
  dirs.push(dir);
  return (name) => join(dir, name);
}

describe('jobs that come while the child runs one', () => {
  it('are read after it without a turn of the event loop, in order, a frame split across reads joined', async () => {
    const file = tempFiles();
    const c = startChild();
    await c.next((m) => m[0] === MessageType.WORKER_UP);
    // One chunk: a job that blocks the event loop, and one behind it that must run before anything read later.
    c.send(job(1, 'spinUntil', [file('go1'), file('started1')]), job(2, 'echo', ['two']));
    await waitUntil(() => existsSync(file('started1')), 'job 1 started');
    // While job 1 runs: job 3 (it blocks too) and the first half of job 4's frame.
    const four = encodeFrame(job(4, 'echo', ['four']));
    const half = Math.floor(four.length / 2);
    await c.write(
      Buffer.concat([encodeFrame(job(3, 'spinUntil', [file('go3'), file('started3')])), four.subarray(0, half)]),
    );
    writeFileSync(file('go1'), '');
    await waitUntil(() => existsSync(file('started3')), 'job 3 started');
    // While job 3 runs: the rest of job 4's frame, then job 5, larger than all read before: the first
    // half, waiting in the child meanwhile, must not be overwritten by the next read.
    const five = 'five'.repeat(1000);
    await c.write(Buffer.concat([four.subarray(half), encodeFrame(job(5, 'echo', [five]))]));
    writeFileSync(file('go3'), '');
    await c.next((m) => m[0] === MessageType.RESULT_OK && m[1] === 5);
    c.send([MessageType.SHUTDOWN]);
    expect(await c.exited).toBe(0);
    const results = c.messages.filter((m) => m[0] === MessageType.RESULT_OK);
    expect(results.map((m) => m[1])).toEqual([1, 2, 3, 4, 5]);
    expect(results.slice(3).map((m) => m[2])).toEqual(['four', five]);
    expect(kinds(c.messages).filter((m) => m[0] === MessageType.ACK)).toEqual(
      [1, 2, 3, 4, 5].map((seq) => [MessageType.ACK, seq]),
    );
  });
});

describe('inq read by the child itself', () => {
  it('jobs that came before the task module loaded run first, in order, before any read after them', async () => {
    const file = tempFiles();
    // Written at once: the child reads them while it imports its task module, and replays them after.
    const c = startChild();
    c.send(job(1, 'spinUntil', [file('go1'), file('started1')]), job(2, 'echo', ['two']));
    await waitUntil(() => existsSync(file('started1')), 'job 1 started');
    await c.write(encodeFrame(job(3, 'echo', ['three'])));
    writeFileSync(file('go1'), '');
    await c.next((m) => m[0] === MessageType.RESULT_OK && m[1] === 3);
    c.send([MessageType.SHUTDOWN]);
    expect(await c.exited).toBe(0);
    expect(c.messages.filter((m) => m[0] === MessageType.RESULT_OK).map((m) => m[1])).toEqual([1, 2, 3]);
  });

  it('works where a task module froze Error (its stack limit is left alone)', async () => {
    const c = startChild('tasks-hardened.mjs');
    await c.next((m) => m[0] === MessageType.WORKER_UP);
    c.send(job(1, 'echo', [1]));
    await c.next((m) => m[0] === MessageType.RESULT_OK && m[1] === 1);
    c.send(job(2, 'sleep', [1]), job(3, 'echo', [3]));
    await c.next((m) => m[0] === MessageType.RESULT_OK && m[1] === 3);
    c.send([MessageType.SHUTDOWN]);
    expect(await c.exited).toBe(0);
    expect(c.messages.filter((m) => m[0] === MessageType.RESULT_OK).map((m) => m[2])).toEqual([1, 1, 3]);
  });

  it('bytes that are not a frame end the child (exit 76), even where the task module swallows uncaught errors', async () => {
    const c = startChild('tasks-hardened.mjs', { SWALLOW: '1' });
    await c.next((m) => m[0] === MessageType.WORKER_UP);
    c.send(job(1, 'sleep', [1]));
    await c.next((m) => m[0] === MessageType.RESULT_OK && m[1] === 1);
    const oversized = Buffer.alloc(8);
    oversized.writeUInt32BE(0x7fffffff, 0);
    await c.write(oversized);
    expect(await c.exited).toBe(76);
  });
});
