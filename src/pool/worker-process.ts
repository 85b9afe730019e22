import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { encodeFrame } from '../protocol/frame-encoder.js';
import { FrameDecoder } from '../protocol/frame-decoder.js';
import { ProtocolError, ResultSerializationError, messageOf } from '../errors.js';
import { serializeError } from '../protocol/error-codec.js';
import { frameSeq } from '../protocol/result-head.js';
import { deathSignalLauncher, withDeathSignal } from './death-signal.js';
import {
  CHILD_CONFIG_ENV,
  MessageType,
  type ChildConfig,
  type ChildMessage,
  type ParentMessage,
  type ProgressFrame,
  type ResultErrorFrame,
} from '../protocol/messages.js';
import { START_RECORD_FD, StartRecordReader } from '../protocol/start-record.js';
import { CLAIM_FD, ClaimPipe } from '../protocol/claim-pipe.js';
import { Fifo } from '../util/fifo.js';
import { ProcRss } from './proc-rss.js';
import type { PoolJob } from './job.js';

/** After a child exits, how long to keep reading frames still in its outq. */
const OUTQ_DRAIN_MS = 1_000;
/** How long a child whose end of a pipe closed may take to exit before it is taken for one that lives on without it. */
const PIPE_CLOSED_GRACE_MS = 1_000;
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
  /** The node binary the children run (default: the parent's own, process.execPath). */
  execPath: string;
  execArgv: string[];
  env: Record<string, string>;
  /** Give the child a claim pipe (claim-pipe.ts), so jobs written ahead to it can be taken back (fair). */
  claims: boolean;
}

/** The parent's handle on one child: pid, inq/outq, state, jobs in flight, tasks done. */
export class WorkerProcess {
  /** Undefined when spawn() threw: there is no process, only a failure to report. */
  private readonly child: ChildProcess | undefined;
  /** -1 when no process was started. */
  readonly pid: number;
  state: ProcessState = 'starting';
  /** Jobs written to inq and not yet settled, in the order written (the child runs them in that order). */
  readonly inFlight = new Fifo<PoolJob>();
  /** Jobs ever written to this child (for maxTasksPerChild). */
  assigned = 0;
  jobsDone = 0;
  /** inq refused more data; wait for 'drain'. */
  blocked = false;
  /** The seq of the job settled last: an ACK for it came after its RESULT and says nothing new. */
  lastSettledSeq = 0;
  /** Chunks read from outq: each one a wake-up of the parent (Pool.stats()). */
  reads = 0;
  /** Last RSS the child reported after a job. */
  rss: number | undefined;
  /** Why the parent killed it, used to settle its running job. */
  killReason: Error | undefined;
  /** Set when the parent asked it to go (SHUTDOWN or kill): its exit is expected. */
  retiring = false;
  /** The parent signalled it (kill), as opposed to asking it to exit (SHUTDOWN). */
  killed = false;
  /** The process could not be started (ENOENT, EMFILE, EAGAIN, a bad argument): reported as an exit. */
  spawnError: Error | undefined;
  readonly spawnedAt = Date.now();
  private readonly decoder: FrameDecoder;
  /** Where the child records the jobs it starts (start-record.ts); undefined: it ACKs every start. */
  private readonly record: StartRecordReader | undefined;
  /** Its claim pipe (claim-pipe.ts); undefined: a job written to it is its for good. */
  private readonly claims: ClaimPipe | undefined;
  /** Jobs taken back through the claim pipe whose DROPPED has not come yet: no job is written to it until it has. */
  readonly dropsAwaited = new Set<number>();
  /** performance.now() when it last became free to start a job it holds (TaskHandler.settled). */
  freeAt = 0;
  /**
   * Epoch ms at or after which its head job started: the start of the last
   * job it settled (its RESULT says when), or when a job was written to it
   * idle. Behind the parent's reading of results, never ahead of the child.
   */
  headStartFloor = 0;
  /** The seq of a running job that ran long and whose followers were taken back: it gets no more jobs until that one ends. */
  heldBy = 0;
  /** Its resident memory, read from /proc (stats()). */
  private readonly procRss: ProcRss;
  private finished = false;
  /** Armed once an end of its pipes closed while it ran (pipeClosed). */
  private pipeWatch: NodeJS.Timeout | undefined;
  private settleExit!: () => void;

  constructor(
    settings: SpawnSettings,
    private readonly owner: ProcessOwner,
  ) {
    this.decoder = new FrameDecoder(settings.config.maxFrameSize);
    this.exited = new Promise((resolve) => {
      this.settleExit = resolve;
    });
    let child: ChildProcess | undefined;
    const record = StartRecordReader.create();
    this.record = record;
    const claims = settings.claims ? ClaimPipe.create() : undefined;
    this.claims = claims;
    const launch = withDeathSignal(deathSignalLauncher(), settings.execPath, [...settings.execArgv, CHILD_MAIN]);
    const config: ChildConfig = {
      ...settings.config,
      startRecord: record !== undefined,
      claims: claims !== undefined,
      deathSignal: launch.command !== settings.execPath,
    };
    try {
      const stdio: ('pipe' | 'inherit' | 'ignore' | number)[] = ['pipe', 'pipe', 'inherit'];
      if (record !== undefined || claims !== undefined) stdio[START_RECORD_FD] = record?.fd ?? 'ignore';
      if (claims !== undefined) stdio[CLAIM_FD] = claims.fd;
      child = spawn(launch.command, launch.args, {
        stdio,
        env: { ...process.env, ...settings.env, [CHILD_CONFIG_ENV]: JSON.stringify(config) },
        // Its own session, out of the parent's process group: a signal to that group (a terminal's hangup or
        // ^C, `kill -HUP -<pgid>`) would reach a child still booting, before it ignores such signals, and
        // end or stop it. The parent decides and tells it over the pipe. (On Windows it would open a console.)
        detached: process.platform !== 'win32',
      });
    } catch (err) {
      // Invalid arguments and some errnos throw instead of emitting 'error': report it like the async case, never synchronously.
      this.spawnError = err as Error;
      setImmediate(() => this.finish(null, null));
    }
    this.child = child;
    // spawn() reports a failure to start asynchronously; pid is then undefined.
    this.pid = child?.pid ?? -1;
    this.procRss = new ProcRss(this.pid);
    if (child === undefined) return;
    // First, before anything can emit: an unhandled 'error' would crash the parent.
    child.on('error', (err) => this.onChildError(err));
    const { stdin, stdout } = child;
    // EMFILE/ENFILE: Node gives up before creating the pipes and emits 'error' next tick.
    if (!stdin || !stdout) return;
    stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    stdin.on('drain', () => {
      this.blocked = false;
      this.owner.onDrain(this);
    });
    // EPIPE when the child dies with bytes queued: its exit settles everything. Or the child closed fd 0 and
    // lives on (see pipeClosed).
    stdin.on('error', () => this.pipeClosed('inq', 0));
    stdout.on('error', () => undefined);
    // EOF on outq: the child is exiting, or it closed fd 1 and lives on (see pipeClosed).
    stdout.once('end', () => this.pipeClosed('outq', 1));
    child.once('exit', (code, signal) => {
      // The last frames (a RESULT sent just before exiting) may still be in the pipe when 'exit' fires:
      // read them before settling. A grandchild holding outq open must not stall us, hence the cap.
      const cap = setTimeout(() => this.finish(code, signal), OUTQ_DRAIN_MS);
      const done = (): void => {
        clearTimeout(cap);
        this.finish(code, signal);
      };
      if (stdout.readableEnded || stdout.destroyed) done();
      else stdout.once('close', done);
    });
  }

  /** Resolves once the child has exited and the parent has settled what it held. */
  readonly exited: Promise<void>;

  get ready(): boolean {
    return this.state === 'idle' || this.state === 'busy';
  }

  /** Writes a batch of frames; false means the pipe is full until 'drain'. */
  write(bytes: Buffer): boolean {
    const ok = this.child?.stdin?.write(bytes) ?? false;
    if (!ok) this.blocked = true;
    return ok;
  }

  /** True when jobs written ahead to it can be taken back (it has a claim pipe). */
  get takesBack(): boolean {
    return this.claims !== undefined;
  }

  /** Before `jobs` jobs are written: their bytes in the claim pipe (a no-op without one). */
  giveClaims(jobs: number): void {
    this.claims?.give(jobs);
  }

  /**
   * Takes back up to `max` of the jobs written to it and not started, from
   * the back, never its head (the one it runs or starts next); they leave
   * inFlight, and it gets no job until its DROPPED names them. None while a
   * withdraw or cancel waits on those jobs, or once it is being killed.
   */
  takeBack(max: number): PoolJob[] {
    const claims = this.claims;
    // Taking more while drops are awaited is safe: nothing was written since, so the back is still unclaimed.
    if (claims === undefined || this.killReason !== undefined) return [];
    if (this.state !== 'busy' && this.state !== 'stopping') return [];
    const n = Math.min(max, this.inFlight.length - 1);
    for (let i = this.inFlight.length - n; i < this.inFlight.length; i++) {
      const job = this.inFlight.at(i) as PoolJob;
      if (job.withdrawing || job.cancelReason !== undefined) return [];
    }
    const got = claims.take(n);
    if (got === 0) return [];
    const jobs = this.inFlight.popBack(got);
    for (const job of jobs) this.dropsAwaited.add(job.seq);
    this.assigned -= got;
    return jobs;
  }

  /** A DROPPED: each job must be one taken back; anything else breaks the protocol (the job would be lost). */
  takeDropped(seqs: unknown): void {
    if (!Array.isArray(seqs) || seqs.length === 0 || !seqs.every((seq) => this.dropsAwaited.has(seq as number)))
      throw new ProtocolError(`child ${this.pid} dropped jobs ${String(seqs)} that were not taken back`);
    for (const seq of seqs as number[]) this.dropsAwaited.delete(seq);
  }

  /** True when the child records its starts instead of ACKing each (start-record.ts). */
  get recordsStarts(): boolean {
    return this.record !== undefined;
  }

  /**
   * Reads the start record: the job it names, and every job in flight before
   * it (the child runs them in order), have started. Costs one pread; call it
   * where the answer matters (a time limit, a death, a withdrawal, stats).
   */
  learnStarts(): void {
    const head = this.inFlight.peek();
    if (head === undefined || this.record === undefined) return;
    const last = this.record.read();
    if (last === undefined) return;
    if (head.seq === last.seq) {
      if (head.startedAt === 0) head.startedAt = last.startedAt;
      return;
    }
    let named = false;
    for (const job of this.inFlight) if (job.seq === last.seq) named = true;
    // A record of a job settled already says nothing about those in flight.
    if (!named) return;
    for (const job of this.inFlight) {
      if (job.startedAt === 0) job.startedAt = last.startedAt;
      if (job.seq === last.seq) return;
    }
  }

  /** Writes one control frame (SOFT_TIMEOUT, WITHDRAW, SHUTDOWN) to a child still there. */
  send(frame: ParentMessage): void {
    if (this.state === 'exited' || this.spawnError !== undefined) return;
    this.child?.stdin?.write(encodeFrame(frame));
  }

  /** Finish what was written, then exit (the frame queues behind the jobs already in the pipe). */
  shutdown(): void {
    if (this.state === 'exited') return;
    this.retiring = true;
    this.state = 'stopping';
    this.send([MessageType.SHUTDOWN]);
  }

  /**
   * Asks the child for the jobs it holds and has not started; it answers with
   * WITHDRAWN. A job whose ACK is already on its way is not among them: it runs.
   */
  withdraw(): void {
    if (this.state === 'exited' || this.killReason !== undefined) return;
    this.learnStarts();
    let asked = 0;
    for (const job of this.inFlight) {
      if (job.startedAt !== 0) continue;
      job.withdrawing = true;
      asked++;
    }
    if (asked > 0) this.send([MessageType.WITHDRAW]);
  }

  /**
   * Takes the jobs a WITHDRAWN names out of inFlight. Each must be in flight
   * here and not started; anything else breaks the protocol.
   */
  takeWithdrawn(seqs: unknown): PoolJob[] {
    if (!Array.isArray(seqs) || seqs.length === 0)
      throw new ProtocolError(`child ${this.pid} sent a WITHDRAWN without job numbers`);
    const wanted = new Set<unknown>(seqs);
    // A job the record says started cannot come back.
    this.learnStarts();
    let held = 0;
    for (const job of this.inFlight) if (wanted.has(job.seq) && job.startedAt === 0) held++;
    // Checked before anything is taken: on a protocol error the jobs stay in flight and the child's exit settles them.
    if (held !== wanted.size || held !== seqs.length) {
      throw new ProtocolError(
        `child ${this.pid} gave back jobs ${seqs.map(String).join(',')} that it does not hold unstarted`,
      );
    }
    return this.inFlight.removeWhere((job) => wanted.has(job.seq));
  }

  kill(signal: NodeJS.Signals, reason?: Error): void {
    if (this.state === 'exited') return;
    if (reason !== undefined && this.killReason === undefined) this.killReason = reason;
    this.retiring = true;
    this.killed = true;
    if (this.state !== 'stopping') this.state = 'stopping';
    // A child whose spawn failed has no pid, but Node's kill() would still signal its handle's unset pid:
    // garbage, or 0 — this process's whole group. Its 'error' (a tick later) ends it instead.
    const child = this.child;
    if (this.spawnError === undefined && child?.pid !== undefined) child.kill(signal);
  }

  /** The job the child is running now, if the parent knows it started (learnStarts() first for the record's word). */
  get running(): PoolJob | undefined {
    const head = this.inFlight.peek();
    return head !== undefined && head.startedAt > 0 ? head : undefined;
  }

  /** Resident memory, from /proc where available, else what the child last reported. */
  readRss(): number | undefined {
    if (this.state === 'exited') return this.rss;
    return this.procRss.read() ?? this.rss;
  }

  /**
   * The child's end of inq or outq is gone. A child on its way out closes
   * both as it exits; one that lives on without them (a task that closed fd 1
   * to reopen it on a file, the C idiom for sending stdout elsewhere, or that
   * closed fd 0) can never again hear a job or send a RESULT: what it holds
   * would wait for ever, and so would every stop. Past a grace for a normal
   * exit it broke the protocol: killed and replaced, its jobs settled so.
   */
  private pipeClosed(pipe: 'inq' | 'outq', fd: number): void {
    if (this.finished || this.pipeWatch !== undefined) return;
    this.pipeWatch = setTimeout(() => {
      if (this.finished || this.killReason !== undefined) return;
      const lost = pipe === 'outq' ? 'send a result' : 'receive a job';
      this.owner.onProtocolError(
        this,
        new ProtocolError(`child ${this.pid} closed its ${pipe} (fd ${fd}) and lives on: it can no longer ${lost}`),
      );
    }, PIPE_CLOSED_GRACE_MS);
    this.pipeWatch.unref();
  }

  /** Settles the child's end once: after 'exit' (and outq drained), or when it could not be spawned. */
  private finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.finished) return;
    this.finished = true;
    this.state = 'exited';
    clearTimeout(this.pipeWatch);
    // What the child started before it died: read before its jobs are split into lost and unstarted.
    this.learnStarts();
    this.record?.close();
    this.claims?.close();
    this.procRss.close();
    this.owner.onExit(this, code, signal);
    this.settleExit();
  }

  private onChildError(err: Error): void {
    if (this.child?.pid === undefined) {
      // Never started: Node emits 'error' and no 'exit'. It counts as an exit (restart limiter, jobs re-dispatched).
      this.spawnError = err;
      this.finish(null, null);
      return;
    }
    // A running child's 'error' means a signal could not be delivered: replace it; its 'exit' settles its jobs.
    this.owner.onProtocolError(this, err);
  }

  /**
   * A whole frame whose value does not decode here (a Map with object keys:
   * the child's encoder takes it, this decoder does not). A RESULT_OK: its
   * job fails with ResultSerializationError, as one the child could not
   * encode. A PROGRESS: the progress says so instead of its value. The child
   * lives on either way. Any other undecodable frame is a protocol error.
   */
  private undecodable(body: Buffer, err: unknown): ResultErrorFrame | ProgressFrame {
    const result = frameSeq(body, MessageType.RESULT_OK);
    const seq = result ?? frameSeq(body, MessageType.PROGRESS);
    let job: PoolJob | undefined;
    if (seq !== undefined) for (const j of this.inFlight) if (j.seq === seq) job = j;
    if (seq === undefined || job === undefined) throw err;
    const why = `does not decode in the parent: ${messageOf(err)}`;
    if (result === undefined) return [MessageType.PROGRESS, seq, `(the progress value ${why})`];
    return [MessageType.RESULT_ERROR, seq, serializeError(new ResultSerializationError(job.name, `its value ${why}`))];
  }

  private onData(chunk: Buffer): void {
    this.reads++;
    // Once the parent has decided to kill this child, nothing more it says counts.
    if (this.killReason !== undefined) return;
    try {
      this.decoder.decode(
        chunk,
        (msg) => {
          if (!Array.isArray(msg) || typeof msg[0] !== 'number')
            throw new ProtocolError(`child ${this.pid} sent a frame that is not a message tuple`);
          this.owner.onMessage(this, msg as ChildMessage);
        },
        (body, err) => this.undecodable(body, err),
      );
    } catch (err) {
      this.owner.onProtocolError(this, err as Error);
      return;
    }
    this.owner.onChunkDone(this);
  }
}
