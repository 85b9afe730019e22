/**
 * The child's side of the pipe protocol, driven by hand: a real child process
 * (dist/child/main.js) with frames written to its inq and read from its outq.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeBody } from '../../dist/protocol/codec.js';
import { encodeFrame } from '../../dist/protocol/frame-encoder.js';
import { FrameDecoder } from '../../dist/protocol/frame-decoder.js';
import { CHILD_CONFIG_ENV, MessageType } from '../../dist/protocol/messages.js';
import { fixture } from '../helpers/pool.js';

const CHILD_MAIN = fileURLToPath(new URL('../../dist/child/main.js', import.meta.url));
const spawned: ChildProcess[] = [];

afterEach(() => {
  for (const child of spawned.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

interface Driven {
  child: ChildProcess;
  /** Every message the child sent so far, as decoded tuples. */
  messages: unknown[][];
  /** Resolves with the first message (from now on or already received) that `accept` takes. */
  next(accept: (msg: unknown[]) => boolean): Promise<unknown[]>;
  send(...frames: unknown[][]): void;
  exited: Promise<number | null>;
}

function startChild(): Driven {
  const child = spawn(process.execPath, [CHILD_MAIN], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: {
      ...process.env,
      [CHILD_CONFIG_ENV]: JSON.stringify({
        app: fixture('tasks-basic.mjs'),
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
