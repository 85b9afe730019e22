import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { encodeFrame } from '../protocol/frame-encoder.js';
import { FrameDecoder } from '../protocol/frame-decoder.js';
import { CHILD_CONFIG_ENV, MessageType, type ChildConfig, type ChildMessage } from '../protocol/messages.js';
import { Fifo, type PoolJob } from './job.js';

/** After a child exits, how long to keep reading frames still in its outq. */
const OUTQ_DRAIN_MS = 1_000;
const CHILD_MAIN = fileURLToPath(new URL('../child/main.js', import.meta.url));

/**
 * The states of a child, as the parent sees it.
 * - starting: spawned, WORKER_UP not yet received; gets no jobs.
 * - idle: ready, nothing in flight.
 * - busy: ready, one or more jobs written to its pipe and not yet settled.
 * - stopping: told to finish what it has and exit (recycling, shrink, close); gets no new jobs.
 * - exited: gone; its unsettled jobs have been handed back or failed.
 */
export type ProcessState = 'starting' | 'idle' | 'busy' | 'stopping' | 'exited';

/** What a WorkerProcess reports to its pool. */
export interface ProcessOwner {
  onMessage(proc: WorkerProcess, msg: ChildMessage): void;
  onChunkDone(proc: WorkerProcess): void;
  onProtocolError(proc: WorkerProcess, err: Error): void;
  onDrain(proc: WorkerProcess): void;
  onExit(proc: WorkerProcess, exitCode: number | null, signal: NodeJS.Signals | null): void;
}

export interface SpawnSettings {
  config: ChildConfig;
  execArgv: string[];
  env: Record<string, string>;
}

/** The parent's handle on one child: pid, inq/outq, state, jobs in flight, tasks done. */
export class WorkerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  state: ProcessState = 'starting';
  /** Jobs written to inq and not yet settled, in the order written (the child runs them in that order). */
  readonly inFlight = new Fifo<PoolJob>();
  /** Jobs ever written to this child (for maxTasksPerChild). */
  assigned = 0;
  jobsDone = 0;
  /** inq refused more data; wait for 'drain'. */
  blocked = false;
  /** Last RSS the child reported after a job. */
  rss: number | undefined;
  /** Why the parent killed it, used to settle its running job. */
  killReason: Error | undefined;
  /** Set when the parent asked it to go (SHUTDOWN or kill): its exit is expected. */
  retiring = false;
  /** The parent signalled it (kill), as opposed to asking it to exit (SHUTDOWN). */
  killed = false;
  readonly spawnedAt = Date.now();
  private readonly decoder: FrameDecoder;

  constructor(settings: SpawnSettings, private readonly owner: ProcessOwner) {
    this.child = spawn(process.execPath, [...settings.execArgv, CHILD_MAIN], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, ...settings.env, [CHILD_CONFIG_ENV]: JSON.stringify(settings.config) },
    });
    // spawn() reports a failure to start asynchronously; pid is then undefined.
    this.pid = this.child.pid ?? -1;
    this.decoder = new FrameDecoder(settings.config.maxFrameSize);
    const { stdin, stdout } = this.child;
    if (stdin === null || stdout === null) throw new Error('child spawned without pipes');
    stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    stdin.on('drain', () => {
      this.blocked = false;
      this.owner.onDrain(this);
    });
    // EPIPE when the child dies with bytes queued: its exit settles everything.
    stdin.on('error', () => undefined);
    stdout.on('error', () => undefined);
    this.child.on('error', (err) => this.owner.onProtocolError(this, err));
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        // The last frames (a RESULT sent just before exiting) may still be in the pipe when 'exit' fires:
        // read them before settling. A grandchild holding outq open must not stall us, hence the cap.
        let done = false;
        const finish = (): void => {
          if (done) return;
          done = true;
          clearTimeout(cap);
          this.state = 'exited';
          this.owner.onExit(this, code, signal);
          resolve();
        };
        const cap = setTimeout(finish, OUTQ_DRAIN_MS);
        if (stdout.readableEnded || stdout.destroyed) finish();
        else stdout.once('close', finish);
      });
    });
  }

  /** Resolves once the child has exited and the parent has settled what it held. */
  readonly exited: Promise<void>;

  get ready(): boolean {
    return this.state === 'idle' || this.state === 'busy';
  }

  /** Writes a batch of frames; false means the pipe is full until 'drain'. */
  write(bytes: Buffer): boolean {
    const ok = this.child.stdin!.write(bytes);
    if (!ok) this.blocked = true;
    return ok;
  }

  /** Finish what was written, then exit (the frame queues behind the jobs already in the pipe). */
  shutdown(): void {
    if (this.state === 'exited') return;
    this.retiring = true;
    this.state = 'stopping';
    this.child.stdin!.write(encodeFrame([MessageType.SHUTDOWN]));
  }

  kill(signal: NodeJS.Signals, reason?: Error): void {
    if (this.state === 'exited') return;
    if (reason !== undefined && this.killReason === undefined) this.killReason = reason;
    this.retiring = true;
    this.killed = true;
    if (this.state !== 'stopping') this.state = 'stopping';
    this.child.kill(signal);
  }

  /** The job the child is running now, if it has ACKed one. */
  get running(): PoolJob | undefined {
    const head = this.inFlight.peek();
    return head !== undefined && head.startedAt > 0 ? head : undefined;
  }

  /** Resident memory, from /proc where available, else what the child last reported. */
  readRss(): number | undefined {
    try {
      const statm = readFileSync(`/proc/${this.pid}/statm`, 'latin1').split(' ');
      return Number(statm[1]) * 4096;
    } catch {
      return this.rss;
    }
  }

  private onData(chunk: Buffer): void {
    // Once the parent has decided to kill this child, nothing more it says counts.
    if (this.killReason !== undefined) return;
    try {
      this.decoder.decode(chunk, (msg) => {
        if (!Array.isArray(msg) || typeof msg[0] !== 'number') throw new Error(`malformed frame from child: not a message tuple`);
        this.owner.onMessage(this, msg as ChildMessage);
      });
    } catch (err) {
      this.owner.onProtocolError(this, err as Error);
      return;
    }
    this.owner.onChunkDone(this);
  }
}
